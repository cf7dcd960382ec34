import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { REPO_ROOT } from './fixtures.js';

export interface NodeProcessOptions {
  /** Extra node flags (`--expose-gc`, `--cpu-prof`, …). */
  flags?: string[];
  /** Working directory (default the repository): tsx reads the `tsconfig.json` found there. */
  cwd?: string;
  env?: Record<string, string>;
}

/** A child node process running a bench TypeScript file through tsx, with an IPC channel. */
export class BenchProcess {
  readonly child: ChildProcess;
  private stderr = '';

  constructor(file: string, options: NodeProcessOptions = {}) {
    this.child = spawn(process.execPath, [...(options.flags ?? []), '--import', 'tsx', resolve(REPO_ROOT, file)], {
      cwd: options.cwd ?? REPO_ROOT,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    this.child.stderr?.setEncoding('utf8');
    this.child.stderr?.on('data', (chunk: string) => {
      this.stderr += chunk;
      if (this.stderr.length > 20_000) this.stderr = this.stderr.slice(-10_000);
    });
  }

  get pid(): number {
    return this.child.pid as number;
  }

  /** What the process wrote to stderr lately (for error reports). */
  get errors(): string {
    return this.stderr;
  }

  /** Resolves once the process says `{ ready: true }` over IPC (its listeners are in place). */
  ready(timeoutMs = 60_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ready message within ${timeoutMs} ms:\n${this.stderr}`)), timeoutMs);
      const onMessage = (message: { ready?: boolean }) => {
        if (!message.ready) return;
        clearTimeout(timer);
        this.child.off('message', onMessage);
        resolve();
      };
      this.child.on('message', onMessage);
      this.child.once('exit', (code) => reject(new Error(`process exited (${code}) before it was ready:\n${this.stderr}`)));
    });
  }

  /** Resolves with the first stdout line matching `pattern`; rejects if the process exits first. */
  waitForLine(pattern: RegExp, timeoutMs = 60_000): Promise<RegExpExecArray> {
    return new Promise((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern}:\n${out}\n${this.stderr}`)), timeoutMs);
      this.child.stdout?.setEncoding('utf8');
      const onData = (chunk: string) => {
        out += chunk;
        const match = pattern.exec(out);
        if (!match) return;
        clearTimeout(timer);
        // What the process writes later (a server's request log) is drained, not kept.
        this.child.stdout?.off('data', onData);
        this.child.stdout?.resume();
        resolve(match);
      };
      this.child.stdout?.on('data', onData);
      this.child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`process exited (${code}) before ${pattern}:\n${out}\n${this.stderr}`));
      });
    });
  }

  /** Sends `message` and resolves with the first reply that has `key`. */
  request<T>(message: Record<string, unknown>, key: string, timeoutMs = 600_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => done(new Error(`no '${key}' reply within ${timeoutMs} ms:\n${this.stderr}`)), timeoutMs);
      const onMessage = (reply: Record<string, unknown>) => {
        if (key in reply) done(undefined, reply[key] as T);
      };
      const onExit = (code: number | null) => done(new Error(`process exited (${code}) while waiting for '${key}':\n${this.stderr}`));
      const done = (error?: Error, value?: T) => {
        clearTimeout(timer);
        this.child.off('message', onMessage);
        this.child.off('exit', onExit);
        if (error) reject(error);
        else resolve(value as T);
      };
      this.child.on('message', onMessage);
      this.child.once('exit', onExit);
      this.child.send(message);
    });
  }

  /** Asks the process to exit cleanly (a `--cpu-prof` profile is written then); kills it after `graceMs`. */
  async stop(graceMs = 5000): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    if (this.child.connected) this.child.send({ cmd: 'exit' });
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }
}

/** A benchmarked server: its process and origin. */
export interface BenchServer {
  name: string;
  origin: string;
  process: BenchProcess;
}

export async function startServer(name: string, file: string, options: NodeProcessOptions = {}): Promise<BenchServer> {
  const proc = new BenchProcess(file, { ...options, env: { DEMO_DELAY_MS: '0', ...options.env } });
  try {
    const match = await proc.waitForLine(/READY (\d+)/);
    return { name, origin: `http://127.0.0.1:${match[1]}`, process: proc };
  } catch (error) {
    // A server stuck before it listens has no IPC handler yet: it must not outlive the bench.
    proc.child.kill('SIGKILL');
    throw new Error(`${name}: ${(error as Error).message}`);
  }
}

/** Empty: a LibSQL file and no Redis, whatever the shell that started the bench exports. */
const EMBEDDED = { DATABASE_URL: '', REDIS_URL: '', REDIS_PREFIX: '' };

/**
 * The standalone server (`bench/servers/standalone.ts`) on a LibSQL file of its own: this
 * checkout's, or with `baselineDir` that checkout's (tsx compiles with the tsconfig of its working
 * directory: the baseline's own for its sources). `env` is added to the server's environment.
 */
export function startStandalone(
  name: string,
  { baselineDir, env = {}, flags }: { baselineDir?: string; env?: Record<string, string>; flags?: string[] } = {},
): Promise<BenchServer> {
  const file = 'bench/servers/standalone.ts';
  if (!baselineDir) return startServer(name, file, { env: { ...EMBEDDED, ...env }, flags });
  return startServer(name, file, { env: { ...EMBEDDED, ...env, BRIDGE_DIR: resolve(baselineDir) }, cwd: resolve(baselineDir), flags });
}

/** Resident set size of a process, from /proc (Linux), in bytes. */
export function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) * 1024 : Number.NaN;
}

/** `/proc/<pid>/stat` counts CPU time in clock ticks: USER_HZ, 100 on Linux. */
const TICKS_PER_SECOND = 100;

/**
 * CPU time a process has used so far, user + system, all threads (GC and libuv included), from
 * /proc (Linux), in ms. Unlike wall time, it does not grow when other jobs take the core.
 */
export function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name may hold spaces: fields are counted from the ')' that closes it (3rd field on).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/** A round's result with the CPU time (ms) its server spent meanwhile. */
export type Measured<R> = R & { cpuMs: number };

/** Runs `round` and adds the CPU time process `pid` spent meanwhile (from `/proc`). */
export async function withCpu<R>(pid: number, round: () => Promise<R>): Promise<Measured<R>> {
  const before = cpuMsOf(pid);
  const result = await round();
  return { ...result, cpuMs: cpuMsOf(pid) - before };
}

/** The command name of a process (`/proc/<pid>/comm`), or undefined when it is gone or unreadable. */
function commOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/**
 * CPU time so far (ms, as `cpuMsOf`) of every process whose command name is one of `names`
 * (`redis-server`; `postgres`: the postmaster and every backend), by pid. Linux only; empty
 * where /proc cannot be read.
 */
export function cpuMsByName(names: readonly string[]): Map<number, number> {
  const out = new Map<number, number>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    const comm = commOf(pid);
    if (!comm || !names.includes(comm)) continue;
    try {
      out.set(pid, cpuMsOf(pid));
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/**
 * CPU time spent between two `cpuMsByName` reads, ms: a process that started in between counts
 * from zero; one that exited in between drops out (its last slice is lost).
 */
export function cpuMsBetween(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0;
  for (const [pid, ms] of after) sum += ms - (before.get(pid) ?? 0);
  return sum;
}

/** The machine's CPU counters (`/proc/stat`, all cores), in ticks. */
export interface MachineTicks {
  busy: number;
  steal: number;
  total: number;
}

export function machineTicks(): MachineTicks {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0];
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1, 9).map(Number);
  return { busy: user + nice + system + irq + softirq, steal, total: user + nice + system + idle + iowait + irq + softirq + steal };
}

/** Cores busy (and taken by the hypervisor, `steal`) between two `machineTicks` reads. */
export function coresBetween(before: MachineTicks, after: MachineTicks, cores: number): { busy: number; steal: number } {
  const total = after.total - before.total;
  if (total <= 0) return { busy: Number.NaN, steal: Number.NaN };
  return { busy: ((after.busy - before.busy) / total) * cores, steal: ((after.steal - before.steal) / total) * cores };
}
