import { redactInternals } from './translate/failure.js';

/** Where the bridge writes what goes wrong (stacks included) and what it does. */
export interface BridgeLogger {
  debug(message: string, meta?: Record<string, unknown>): void;
  info(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
  error(message: string, meta?: Record<string, unknown>): void;
}

/** A logger that writes warnings and errors to the console and keeps quiet otherwise. */
export const consoleLogger: BridgeLogger = {
  debug: () => {},
  info: () => {},
  warn: (message, meta) => console.warn(`[mastra-agui-bridge] ${message}`, meta ?? ''),
  error: (message, meta) => console.error(`[mastra-agui-bridge] ${message}`, meta ?? ''),
};

const REDACTING = Symbol('redacting');

/**
 * `logger` with the addresses, store URLs and paths taken out of its warnings and errors (where a
 * driver's message lands: `connect ECONNREFUSED 10.0.0.5:5432`); the failure's kind stays. Debug
 * and info lines are passed as they are: the bridge writes no error text there.
 *
 * @example
 * const logger = redactingLogger(consoleLogger);
 * logger.warn('storage: connect ECONNREFUSED 10.0.0.5:5432'); // "storage: connect ECONNREFUSED <address>"
 */
export function redactingLogger(logger: BridgeLogger): BridgeLogger {
  if (REDACTING in logger) return logger;
  return {
    [REDACTING]: true,
    debug: (message, meta) => logger.debug(message, meta),
    info: (message, meta) => logger.info(message, meta),
    warn: (message, meta) => logger.warn(redactInternals(message), meta),
    error: (message, meta) => logger.error(redactInternals(message), meta),
  } as BridgeLogger;
}
