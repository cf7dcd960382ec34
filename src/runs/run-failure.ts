import type { BridgeLogger } from '../logger.js';
import { errorMessage } from '../text.js';
import { runFailure } from '../translate/failure.js';

/**
 * A run that broke, logged once and named for its `RUN_ERROR` (`runFailure`): an outage of
 * storage or Redis at warn (it heals, and the client is told to try again), anything else at error,
 * with its stack. `code` is the code for anything that is not an outage.
 */
export function loggedRunFailure(logger: BridgeLogger, run: string, error: unknown, code: string): { message: string; code: string } {
  const failure = runFailure(error, code);
  if (failure.code === 'UNAVAILABLE') logger.warn(`${run} cut by an outage: ${errorMessage(error)}`);
  else logger.error(`${run} broke: ${errorMessage(error)}`, { stack: (error as Error)?.stack });
  return failure;
}
