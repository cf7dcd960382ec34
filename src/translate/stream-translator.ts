import { injectable } from 'inversify';
import { RunTranslator, type RunTranslatorOptions } from './run-translator.js';

/**
 * The translator service: hands out one fresh `RunTranslator` (a pure state machine) per run.
 *
 * @example
 * const t = translators.begin({ threadId, runId });
 */
@injectable()
export class StreamTranslator {
  begin(options: RunTranslatorOptions): RunTranslator {
    return new RunTranslator(options);
  }
}
