import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './support/process.js';

// `prepack` / `postpack` (scripts/packed-manifest.mjs) in a copy of the checkout's manifest: the
// packed file loses `prepare`, and afterwards the checkout's file is back as it was, bytes and
// modification time, so `npm start` after `npm pack` finds dist/ still fresh (scripts/fresh-build.mjs).

let stage = '';
afterEach(() => rmSync(stage, { recursive: true, force: true }));

const manifest = (dir: string) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
const step = (dir: string, name: 'strip' | 'restore') => execFileSync(process.execPath, ['scripts/packed-manifest.mjs', name], { cwd: dir });

describe('the packed manifest', () => {
  it('strips `prepare` for the tarball, then puts package.json back with its bytes and its modification time', () => {
    stage = mkdtempSync(join(tmpdir(), 'bridge-manifest-'));
    mkdirSync(join(stage, 'scripts'));
    cpSync(join(REPO_ROOT, 'scripts/packed-manifest.mjs'), join(stage, 'scripts/packed-manifest.mjs'));
    cpSync(join(REPO_ROOT, 'package.json'), join(stage, 'package.json'));
    // As a checkout built after its last edit has it: package.json older than dist/.
    const edited = new Date(Date.now() - 3_600_000);
    utimesSync(join(stage, 'package.json'), edited, edited);
    const before = readFileSync(join(stage, 'package.json'));

    step(stage, 'strip');
    expect(manifest(stage).scripts.prepare).toBeUndefined();
    expect(manifest(stage).scripts.start).toBe(manifest(REPO_ROOT).scripts.start);

    step(stage, 'restore');
    expect(readFileSync(join(stage, 'package.json'))).toEqual(before);
    expect(Math.round(statSync(join(stage, 'package.json')).mtimeMs)).toBe(edited.getTime());
  });
});
