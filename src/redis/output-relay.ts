import { outputFinished, type RunOutput } from '../mastra/index.js';
import { deserialize, serialize } from './pubsub/index.js';
import type { ResultCapture } from '../runs/result-capture.js';
import { endsStep, type MastraChunk } from '../translate/chunks.js';
import { errorMessage } from '../text.js';

/** One message on a relay channel: a chunk, a sign of life, a cut, the output's end, or its failure. */
type RelayMessage = { chunk: unknown } | { beat: true } | { cut: true } | { end: true } | { error: string };

/** How often the relaying process says it is still there while the run is quiet (a tool that takes long). */
const BEAT_MS = 5000;
/** Past this with nothing heard, the relaying process is gone or cut off from Redis. */
const SILENCE_MS = 3 * BEAT_MS;

/**
 * Publishes a run's output on `publish`, chunk by chunk and in order, for another process that
 * reads it as its own (`RelayedOutput`): the tool results the step hook captured go just before
 * the step's end, as the reading process would add them, and a cut (`wasCut`) just before the
 * run's end. The output is read to its end even when publishing fails (Redis away): Mastra runs a
 * step only as its stream is read, and a run left unread would hold its thread.
 */
export async function relayOutput(
  output: RunOutput,
  capture: ResultCapture,
  publish: (text: string) => Promise<unknown>,
  wasCut: () => boolean = () => false,
): Promise<void> {
  let relaying = true;
  const send = async (message: RelayMessage) => {
    if (!relaying) return;
    await publish(serialize(message)).catch(() => {
      relaying = false; // the reader hears nothing more and gives up after `SILENCE_MS`
    });
  };
  const beat = setInterval(() => void send({ beat: true }), BEAT_MS);
  try {
    for await (const chunk of output.fullStream) {
      const captured = endsStep(chunk as MastraChunk) ? capture.take() : undefined;
      if (captured) await send({ chunk: captured });
      // A run cut between two steps ends with a plain `finish`: the reader learns of the cut first.
      if ((chunk as MastraChunk).type === 'finish' && wasCut()) await send({ cut: true });
      await send({ chunk });
    }
    await outputFinished(output);
    await send({ end: true });
  } catch (error) {
    await send({ error: errorMessage(error) });
  } finally {
    clearInterval(beat);
  }
}

/**
 * A run's output read from a relay channel as if read here: its chunks in order, and its end
 * (`outputFinished`) once the relaying Mastra is done with it. The run's failure fails the stream
 * as it would here; a silent relay fails it as an outage (`RUN_ERROR { code: "UNAVAILABLE" }`).
 */
export class RelayedOutput implements RunOutput {
  private readonly buffered: RelayMessage[] = [];
  private wake?: () => void;
  private settleFinished!: { resolve: () => void; reject: (error: unknown) => void };
  private readonly finished = new Promise<void>((resolve, reject) => (this.settleFinished = { resolve, reject }));
  private settled = false;
  private closing?: Promise<void>;

  /** `onCut` hears that the run was cut, before its last chunk is read. */
  constructor(
    private readonly unsubscribe: () => Promise<unknown>,
    private readonly onCut: () => void = () => {},
  ) {
    this.finished.catch(() => {
      // nobody may wait for the end (a cut waits with a bound of its own): the stream's reader hears the failure
    });
  }

  /** Pass to the subscription of the relay channel. */
  readonly listener = (text: string): void => {
    this.buffered.push(deserialize(text) as RelayMessage);
    this.wake?.();
  };

  readonly fullStream: AsyncIterable<unknown> = { [Symbol.asyncIterator]: () => this.read() };

  _waitUntilFinished(): Promise<void> {
    return this.finished;
  }

  private async *read(): AsyncGenerator<unknown> {
    let over = false;
    try {
      for (;;) {
        const message = await this.next();
        if ('chunk' in message) yield message.chunk;
        else if ('cut' in message) this.onCut();
        else if ('end' in message || 'error' in message) {
          over = true;
          this.settle(message);
          if ('error' in message) throw new Error(message.error);
          return;
        }
      }
    } catch (error) {
      if (!over) this.settle({ error: errorMessage(error) });
      throw error;
    } finally {
      // A reader that stops early (a cut) still hears the run's end: what a cut waits for.
      if (!over) void this.drain();
    }
  }

  /** Reads on, past a reader that stopped, until the run's end. */
  private async drain(): Promise<void> {
    for (;;) {
      const message = await this.next().catch((error: unknown) => ({ error: errorMessage(error) }));
      if ('end' in message || 'error' in message) return this.settle(message);
    }
  }

  get over(): boolean {
    return this.settled;
  }

  private settle(message: { end: true } | { error: string }): void {
    this.settled = true;
    if ('end' in message) this.settleFinished.resolve();
    else this.settleFinished.reject(new Error(message.error));
    void this.close();
  }

  /** Stops listening (once the run's end is heard, or when the request never got to a run). */
  close(): Promise<void> {
    this.closing ??= this.unsubscribe().then(
      () => undefined,
      () => undefined,
    );
    return this.closing;
  }

  /** The next message, or a timeout once the relaying process has been silent too long. */
  private next(): Promise<RelayMessage> {
    const message = this.buffered.shift();
    if (message) return Promise.resolve(message);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.wake = undefined;
        // A timeout, as a dependency's failure reads: the run's client gets `UNAVAILABLE`.
        reject(Object.assign(new Error('The process where the run stopped stopped relaying it'), { code: 'ETIMEDOUT' }));
      }, SILENCE_MS);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve(this.buffered.shift()!);
      };
    });
  }
}
