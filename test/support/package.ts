import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './process.js';
import { errorMessage } from '../../src/text.js';

const run = promisify(execFile);

/** Runs npm in `cwd`; a failure throws with what npm printed. */
export async function npm(cwd: string, args: string[]): Promise<{ stdout: string; stderr: string }> {
  try {
    return await run('npm', args, { cwd, maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`npm ${args.join(' ')} failed in ${cwd}:\n${stdout ?? ''}\n${stderr ?? errorMessage(error)}`);
  }
}

/** What `prepack` runs: the build, then the manifest the tarball gets (`scripts/packed-manifest.mjs`). */
const PREPACK = 'npm run build && node scripts/packed-manifest.mjs strip';

/**
 * Packs the package as `npm pack` (and so `npm publish`) does, but from a copy of the checkout
 * holding the build the tests share (`dist/`, made by vitest's global setup with `npm run build`):
 * `prepack`'s manifest step runs there, its build is not run a second time. Returns the tarball's
 * path; its folder is the caller's to remove.
 *
 * @example
 * const tarball = await packPackage(); // /tmp/pack-xyz/mastra-agui-bridge-0.1.0.tgz
 */
export async function packPackage(): Promise<string> {
  const { files, scripts } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { files: string[]; scripts: Record<string, string> };
  if (scripts.prepack !== PREPACK) throw new Error(`package.json's prepack is not what packPackage does in its place: ${scripts.prepack}`);
  const stage = mkdtempSync(join(tmpdir(), 'bridge-stage-'));
  // `!path` entries leave files out: npm pack applies them to what the stage holds.
  const included = files.filter((path) => !path.startsWith('!'));
  for (const path of new Set(['package.json', 'scripts/packed-manifest.mjs', ...included])) {
    cpSync(join(REPO_ROOT, path), join(stage, path), { recursive: true, filter: (src) => !src.endsWith('.test.ts') });
  }
  const out = mkdtempSync(join(tmpdir(), 'bridge-pack-'));
  try {
    await run(process.execPath, ['scripts/packed-manifest.mjs', 'strip'], { cwd: stage });
    await npm(stage, ['pack', '--ignore-scripts', '--pack-destination', out, '--silent']);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
  const [tarball] = readdirSync(out).filter((f) => f.endsWith('.tgz'));
  if (!tarball) throw new Error(`npm pack wrote no tarball in ${out}`);
  return join(out, tarball);
}

/**
 * A page's install line for library users (`npm install mastra-agui-bridge …`; the README's by
 * default), as its words: the consumer test installs exactly these, with the tarball for the
 * package's name.
 */
export function installLine(page = 'README.md'): string[] {
  const text = readFileSync(join(REPO_ROOT, page), 'utf8');
  const line = /^npm install mastra-agui-bridge( .*)?$/m.exec(text)?.[0];
  if (!line) throw new Error(`${page} has no \`npm install mastra-agui-bridge …\` line`);
  return line.split(/\s+/).slice(1);
}
