import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { killIfRunning, REPO_ROOT, startServerProcess, type ServerProcess } from './support/process.js';

// The package's bin as a user runs it, from a folder of their own: `--help` and `--version` answer
// and exit without starting anything (no server, no `.data/`); a wrong flag is exit 2; `token`
// prints a JWT the server accepts.

const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const MAIN = join(REPO_ROOT, 'src/server/main.ts');
const SECRET = 'cli-test-secret-of-at-least-32-bytes!!';
const cwd = mkdtempSync(join(tmpdir(), 'bridge-cli-'));

function bin(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // From a folder of the user's: tsx takes the repository's tsconfig (decorators) by name.
    const fullEnv = { ...process.env, TSX_TSCONFIG_PATH: join(REPO_ROOT, 'tsconfig.json'), ...env };
    execFile(process.execPath, ['--import', tsx, MAIN, ...args], { cwd, env: fullEnv, timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
    });
  });
}

let server: ServerProcess | undefined;
afterAll(() => {
  killIfRunning(server);
  rmSync(cwd, { recursive: true, force: true });
});

describe('mastra-agui-bridge (the bin)', () => {
  it('--help lists the commands and every variable, and starts nothing', async () => {
    const { code, stdout } = await bin(['--help']);
    expect(code).toBe(0);
    expect(stdout).toContain('mastra-agui-bridge token --sub <resource>');
    for (const name of ['PORT', 'DATABASE_URL', 'REDIS_URL', 'AUTH_JWT_SECRET', 'CORS_ORIGINS', 'LOG_LEVEL'])
      expect(stdout).toMatch(new RegExp(`^  ${name} `, 'm'));
    expect(existsSync(join(cwd, '.data'))).toBe(false);
  });

  it('--version prints the package version', async () => {
    const { code, stdout } = await bin(['--version']);
    expect(code).toBe(0);
    expect(stdout.trim()).toBe((JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version);
  });

  it('an unknown flag is a clear error and exit 2, before anything starts', async () => {
    const { code, stdout, stderr } = await bin(['--port', '9999']);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe("mastra-agui-bridge: Unknown option '--port'\nTry 'mastra-agui-bridge --help'.\n");
    expect(existsSync(join(cwd, '.data'))).toBe(false);
  });

  it('token prints a JWT that a server with the same secret accepts as that resource', async () => {
    const { code, stdout } = await bin(['token', '--sub', 'alice', '--ttl', '10m'], { AUTH_JWT_SECRET: SECRET });
    expect(code).toBe(0);
    const token = stdout.trim();
    server = await startServerProcess({ AUTH_JWT_SECRET: SECRET, DATABASE_URL: `file:${join(cwd, 'auth.db')}` });
    const auth = { authorization: `Bearer ${token}` };
    const mine = await fetch(`${server.url}/threads`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ threadId: 't1' }),
    });
    expect(mine.status).toBe(201);
    expect(await mine.json()).toMatchObject({ id: 't1', resourceId: 'alice' });
    const others = await fetch(`${server.url}/threads?resourceId=bob`, { headers: auth });
    expect(others.status).toBe(403);
  });

  it('a MODEL whose provider key is missing stops the start with the variable to set, before anything listens', async () => {
    const { code, stdout, stderr } = await bin([], { MODEL: 'openai/gpt-5-mini', OPENAI_API_KEY: '', PORT: '0' });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    // One plain line for a person, also when stderr is not a terminal (here a pipe): no JSON, no stack.
    expect(stderr).toMatch(/^mastra-agui-bridge: Invalid environment: MODEL=openai\/gpt-5-mini needs OPENAI_API_KEY[^\n]*\n$/);
    expect(existsSync(join(cwd, '.data'))).toBe(false);
  });

  it('a bad WEBHOOK_SECRET or webhook URL stops the start with the variable at fault, before anything listens', async () => {
    const secret = await bin([], { WEBHOOK_URLS: 'http://127.0.0.1:9/hooks', WEBHOOK_SECRET: 'not-a-secret', PORT: '0' });
    expect(secret.code).toBe(1);
    expect(secret.stderr).toContain('Invalid environment: WEBHOOK_SECRET: must be');
    const url = await bin([], { WEBHOOK_URLS: 'ftp://example.com/hooks', WEBHOOK_SECRET: `whsec_${Buffer.alloc(32, 7).toString('base64')}`, PORT: '0' });
    expect(url.code).toBe(1);
    expect(url.stderr).toContain('Invalid environment: WEBHOOK_URLS.0: must be an http(s):// URL');
    expect(existsSync(join(cwd, '.data'))).toBe(false);
  });

  it('token without AUTH_JWT_SECRET says what it needs (exit 2)', async () => {
    const { code, stderr } = await bin(['token', '--sub', 'alice'], { AUTH_JWT_SECRET: '' });
    expect(code).toBe(2);
    expect(stderr).toContain('token needs AUTH_JWT_SECRET');
  });
});
