#!/usr/bin/env node
// The package's bin: starts the standalone bridge from the built server entry.
import '../dist/server.js';
