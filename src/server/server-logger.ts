import { pino, type Logger } from 'pino';
import { logLevel, type ServerEnv } from './env.js';

/**
 * The standalone server's logger: pino at `LOG_LEVEL` (default `info`), one JSON line per entry on
 * `process.stdout` (synchronous for files and pipes on Linux, and a write to a closed pipe is an
 * `error` event the caller can ignore, not a crash).
 *
 * @example
 * const log = serverLogger(env);
 * log.info({ url }, 'listening');
 */
export function serverLogger(env: Pick<ServerEnv, 'LOG_LEVEL'>, destination: NodeJS.WritableStream = process.stdout): Logger {
  return pino({ level: logLevel(env) }, destination);
}
