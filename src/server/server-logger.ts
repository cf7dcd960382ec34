import { pino, type Logger } from 'pino';
import { PinoPretty } from 'pino-pretty';
import { traceLogFields } from '../observability/trace-context.js';
import { logLevel, type ServerEnv } from './env.js';

/** How the server writes its log: `json` (one object a line) or `pretty` (a line a person reads). */
export type LogFormat = 'json' | 'pretty';

/** `LOG_FORMAT`, else `pretty` on a terminal and `json` anywhere else (a file, a pipe, a log shipper). */
export function logFormat(env: Pick<ServerEnv, 'LOG_FORMAT'>, destination: NodeJS.WritableStream): LogFormat {
  return env.LOG_FORMAT ?? ((destination as { isTTY?: boolean }).isTTY ? 'pretty' : 'json');
}

/**
 * The standalone server's logger: pino at `LOG_LEVEL` on `process.stdout`, as `logFormat` says,
 * with the active span's ids on each line (`traceLogFields`). Writes are synchronous (files and
 * pipes, on Linux), and a write to a closed pipe is an `error` event to ignore, not a crash.
 */
export function serverLogger(env: Pick<ServerEnv, 'LOG_LEVEL' | 'LOG_FORMAT'>, destination: NodeJS.WritableStream = process.stdout): Logger {
  const level = logLevel(env);
  const options = { level, mixin: traceLogFields };
  if (logFormat(env, destination) === 'json') return pino(options, destination);
  // pino-pretty as a plain stream, in this thread: no transport worker for a terminal's lines.
  const colorize = (destination as { isTTY?: boolean }).isTTY === true;
  return pino(options, PinoPretty({ destination, sync: true, colorize, ignore: 'pid,hostname', translateTime: 'SYS:HH:MM:ss.l' }));
}
