import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { checkSamples, SAMPLE_OPTIONS, sampleModules } from './support/doc-samples.js';
import { installExample } from './support/examples.js';
import { REPO_ROOT } from './support/process.js';

// Every TypeScript block in the README and docs/ type-checks as written, with the imports it
// shows, `mastra-agui-bridge` resolving to this checkout's sources (test/consumer.test.ts checks
// them again against the packed package, under three module settings). How blocks become modules:
// test/support/doc-samples.ts.

// Beside the CopilotKit example, so the blocks that import CopilotKit find its packages (the root's too).
const dir = join(REPO_ROOT, 'examples', 'copilotkit', '.doc-samples');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A bundler's module settings, as a reader's app (and the example) resolves packages. */
const BUNDLER_OPTIONS: ts.CompilerOptions = { ...SAMPLE_OPTIONS, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler };

describe('the TypeScript in README and docs/', () => {
  it('type-checks, block by block, with the imports each shows', async () => {
    await installExample('copilotkit');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const modules = sampleModules();
    expect(modules.length).toBeGreaterThan(10);
    const problems = checkSamples(dir, modules, {
      ...BUNDLER_OPTIONS,
      baseUrl: REPO_ROOT,
      paths: {
        'mastra-agui-bridge': ['src/index.ts'],
        'mastra-agui-bridge/client': ['src/client/index.ts'],
        'mastra-agui-bridge/demo': ['src/demo/index.ts'],
      },
    });
    expect(problems).toEqual([]);
  }, 600_000);

  it('type-checks the TSX blocks (React components, against the CopilotKit example’s React)', async () => {
    await installExample('copilotkit');
    const modules = sampleModules({ jsx: true });
    expect(modules.length).toBeGreaterThan(0);
    const tsxDir = join(dir, 'tsx');
    mkdirSync(tsxDir, { recursive: true });
    expect(checkSamples(tsxDir, modules, { ...BUNDLER_OPTIONS, jsx: ts.JsxEmit.ReactJSX }, '.tsx')).toEqual([]);
  }, 600_000);
});
