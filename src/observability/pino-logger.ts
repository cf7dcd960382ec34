import type { Logger } from 'pino';
import type { BridgeLogger } from '../logger.js';

/**
 * The bridge's `BridgeLogger` over a pino logger: one structured JSON line per call, the message
 * as `msg` and the meta's fields beside it.
 *
 * @example
 * import pino from 'pino';
 * const bridge = createBridge({ logger: pinoLogger(pino({ level: 'info' })) });
 */
export function pinoLogger(logger: Logger): BridgeLogger {
  return {
    debug: (message, meta) => logger.debug(meta ?? {}, message),
    info: (message, meta) => logger.info(meta ?? {}, message),
    warn: (message, meta) => logger.warn(meta ?? {}, message),
    error: (message, meta) => logger.error(meta ?? {}, message),
  };
}
