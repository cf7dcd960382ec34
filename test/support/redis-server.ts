import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';

/** A `redis-server` of the test's own, on a free port: the machine's Redis is never stopped. */
export interface OwnRedis {
  url: string;
  /** Stops it as an operator would (`SHUTDOWN`: with `persist`, it saves first). */
  stop(): Promise<void>;
  /** Starts it again on the same port and folder: with `persist`, with the data it saved; else empty. */
  start(): Promise<void>;
  /** Stops it for good and removes its folder. */
  cleanup(): Promise<void>;
}

/** Resolves once something accepts connections on the port. */
async function listening(port: number): Promise<void> {
  for (let wait = 10; ; wait = Math.min(wait * 2, 200)) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (up) return;
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

/**
 * Starts `redis-server` (the binary on the machine) on a free loopback port, in a folder of its
 * own; `persist` keeps its data across a restart (append-only file), else it keeps nothing, like
 * the machine's.
 *
 * @example
 * const redis = await startOwnRedis({ persist: false });
 * await redis.stop(); await redis.start(); // the same URL, empty
 */
export async function startOwnRedis({ persist }: { persist: boolean }): Promise<OwnRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'agui-redis-'));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', persist ? 'yes' : 'no'];
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn('redis-server', args, { stdio: 'ignore' });
    await listening(port);
  };
  const stop = async () => {
    const running = child;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGTERM'); // redis-server's SIGTERM is a SHUTDOWN (saving when persistence is on)
    await exited;
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    start,
    stop,
    cleanup: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
