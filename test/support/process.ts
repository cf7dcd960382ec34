import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { BUILT_SERVER } from '../../scripts/fresh-build.mjs';

/** The repository root (the standalone server is started from here, as `npm start` does). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface ServerProcess {
  /** The URL the server printed, prefix included (e.g. `http://127.0.0.1:41234/agui`). */
  url: string;
  child: ChildProcess;
  /** Everything written so far. */
  output(): { stdout: string; stderr: string };
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Spawns the real standalone server, as `npm start` runs it (`dist/server.js`, which vitest's
 * global setup builds when it is stale), and resolves once it printed its `listening on <url>`
 * line. Rejects if it exits first (with what it printed).
 */
export function startServerProcess(env: Record<string, string>): Promise<ServerProcess> {
  return startNodeProcess([BUILT_SERVER], REPO_ROOT, { HOST: '127.0.0.1', PORT: '0', ...env });
}

/** What the bridge's servers and samples print once they listen; the URL is its first group. */
const LISTENING = /listening on (http:\/\/\S+)/;

/**
 * Spawns `node <args>` in `cwd` (this process's environment with `env` over it) and resolves once
 * it printed `listening on <url>` (or what `ready` matches, the URL its first group). Rejects if it
 * exits first (with what it printed).
 */
export function startNodeProcess(args: string[], cwd: string, env: Record<string, string> = {}, ready = LISTENING): Promise<ServerProcess> {
  const child = spawn(process.execPath, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return new Promise((resolve, reject) => {
    let started = false;
    child.stdout.on('data', (chunk: string) => {
      stdout += chunk;
      const match = ready.exec(stdout);
      if (match && !started) {
        started = true;
        resolve({ url: match[1], child, output: () => ({ stdout, stderr }), exited });
      }
    });
    void exited.then(({ code, signal }) => {
      if (!started) reject(new Error(`server exited (code ${code}, signal ${signal}) before listening:\n${stdout}\n${stderr}`));
    });
  });
}

/** Ends a server this test started, by its pid, if it is still running. */
export function killIfRunning(server: ServerProcess | undefined): void {
  if (server && server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
}
