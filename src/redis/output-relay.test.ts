import { afterAll, describe, expect, it } from 'vitest';
import { testRedis } from '../../test/support/redis.js';
import { ResultCapture } from '../runs/result-capture.js';
import { CAPTURED_TOOL_RESULTS } from '../translate/chunks.js';
import { RelayedOutput, relayOutput } from './output-relay.js';

const redis = testRedis('output-relay');
afterAll(() => redis.cleanup());

/** A run's output as Mastra gives it: chunks, a step hook that fires before the step ends, and its end. */
function output(chunks: Array<{ type: string; [key: string]: unknown }>, capture: ResultCapture, failure?: Error) {
  let finished = false;
  return {
    finished: () => finished,
    fullStream: (async function* () {
      for (const chunk of chunks) {
        if (chunk.type === 'step-finish') capture.onStepFinish({ toolResults: [{ toolCallId: 'call-1', output: { deleted: 'a.txt' } }] });
        yield chunk;
      }
      if (failure) throw failure;
    })(),
    _waitUntilFinished: async () => {
      finished = true;
    },
  };
}

/** A relay channel, its publisher in one connection and its reader in another (two processes). */
async function relayed(onCut?: () => void) {
  const [from, to] = [await redis.connect(), await redis.connect()];
  const channel = `${redis.prefix}:relay:${Math.random()}`;
  const reader: RelayedOutput = new RelayedOutput(() => to.subscriber.unsubscribe(channel, reader.listener), onCut);
  await to.subscriber.subscribe(channel, reader.listener);
  return { reader, publish: (text: string) => from.client.publish(channel, text) };
}

async function read(stream: AsyncIterable<unknown>): Promise<unknown[]> {
  const chunks: unknown[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

describe('relayOutput → RelayedOutput', () => {
  it('reads the chunks in order, what the step hook captured just before the step’s end, and the end once the run is done there', async () => {
    const { reader, publish } = await relayed();
    const capture = new ResultCapture();
    const run = output([{ type: 'text-delta', payload: { text: 'a', at: new Date(0) } }, { type: 'step-finish' }, { type: 'finish' }], capture);
    const relaying = relayOutput(run, capture, publish);
    expect(await read(reader.fullStream)).toEqual([
      { type: 'text-delta', payload: { text: 'a', at: new Date(0) } },
      { type: CAPTURED_TOOL_RESULTS, results: [{ toolCallId: 'call-1', result: { deleted: 'a.txt' }, isError: false }] },
      { type: 'step-finish' },
      { type: 'finish' },
    ]);
    await reader._waitUntilFinished();
    await relaying;
    expect(run.finished()).toBe(true);
  });

  it('a run that fails there fails the stream here, with its message', async () => {
    const { reader, publish } = await relayed();
    const capture = new ResultCapture();
    void relayOutput(output([{ type: 'start' }], capture, new Error('the model broke')), capture, publish);
    await expect(read(reader.fullStream)).rejects.toThrow('the model broke');
    await expect(reader._waitUntilFinished()).rejects.toThrow('the model broke');
  });

  it('a reader that stops early (a cut) still hears the run’s end', async () => {
    const { reader, publish } = await relayed();
    const capture = new ResultCapture();
    void relayOutput(output([{ type: 'start' }, { type: 'text-delta' }, { type: 'finish' }], capture), capture, publish);
    for await (const chunk of reader.fullStream) if ((chunk as { type: string }).type === 'start') break;
    await expect(reader._waitUntilFinished()).resolves.toBeUndefined();
  });

  it('a run cut there between two steps: the reader hears of the cut before the run’s plain `finish`', async () => {
    const heard: string[] = [];
    const { reader, publish } = await relayed(() => heard.push('cut'));
    const capture = new ResultCapture();
    void relayOutput(output([{ type: 'start' }, { type: 'finish' }], capture), capture, publish, () => true);
    for await (const chunk of reader.fullStream) heard.push((chunk as { type: string }).type);
    expect(heard).toEqual(['start', 'cut', 'finish']);
  });

  it('a run is read to its end there even when nothing can be published', async () => {
    const capture = new ResultCapture();
    const run = output([{ type: 'start' }, { type: 'finish' }], capture);
    await relayOutput(run, capture, () => Promise.reject(new Error('The client is offline')));
    expect(run.finished()).toBe(true);
  });
});
