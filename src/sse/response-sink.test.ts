import { request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { EventType, type Event } from '@ag-ui/core';
import { EventEncoder } from '@ag-ui/encoder';
import { serve, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { EventStream, nodeResponseOf } from './event-stream.js';

const delta = (text: string): Event => ({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: text });

let server: ServerType | undefined;

afterEach(async () => {
  (server as { closeAllConnections?: () => void } | undefined)?.closeAllConnections?.();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** Serves `app` on a real socket and answers its base URL. */
async function listen(app: Hono): Promise<string> {
  server = await new Promise<ServerType>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function get(url: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => request(url, resolve).on('error', reject).end());
}

async function bodyOf(res: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The request's `ServerResponse`, each chunk written to it recorded (its length) in `writes`. */
function recordingWrites(env: unknown, writes: number[]): ServerResponse {
  const outgoing = nodeResponseOf(env);
  if (!outgoing) throw new Error('not served by @hono/node-server');
  const write = outgoing.write.bind(outgoing) as (chunk: Uint8Array) => boolean;
  outgoing.write = ((chunk: Uint8Array) => (writes.push(chunk.byteLength), write(chunk))) as typeof outgoing.write;
  return outgoing;
}

/** An app whose `/events` streams through `EventStream` to Node's response, `produce` writing it. */
function streamingApp(produce: (out: EventStream) => void, writes: number[] = []): Hono {
  const app = new Hono();
  // A header set once the handler has answered, as a request log's `X-Request-Id` is.
  app.use('*', async (c, next) => {
    await next();
    c.res.headers.set('X-After', 'yes');
  });
  app.get('/events', (c) => {
    const out = new EventStream(new EventEncoder(), {}, recordingWrites(c.env, writes));
    produce(out);
    return out.response;
  });
  return app;
}

describe('EventStream on Node’s response', () => {
  it('writes its bytes to the socket directly, after the headers every middleware set', async () => {
    const writes: number[] = [];
    const base = await listen(
      streamingApp((out) => {
        out.raw(': connected\n\n');
        out.send([delta('one')]);
        setImmediate(() => {
          out.send([delta('two')]);
          out.close();
        });
      }, writes),
    );
    const res = await get(`${base}/events`);
    expect(res.headers['x-after']).toBe('yes');
    expect(res.headers['content-type']).toContain('text/event-stream');
    const text = (await bodyOf(res)).toString();
    expect(text.startsWith(': connected\n\n')).toBe(true);
    expect(text.indexOf('"delta":"one"')).toBeLessThan(text.indexOf('"delta":"two"'));
    // Every byte of the body went through `ServerResponse.write`, none through a web stream.
    expect(writes.reduce((sum, n) => sum + n, 0)).toBe(Buffer.byteLength(text));
  });

  it('hands its bytes to the body when a middleware encodes the response', async () => {
    const app = streamingApp((out) => {
      out.send([delta('zipped')]);
      setImmediate(() => out.close());
    });
    const zipped = new Hono();
    zipped.use('*', async (c, next) => {
      await next();
      c.res = new Response(c.res.body!.pipeThrough(new CompressionStream('gzip')), c.res);
      c.res.headers.set('Content-Encoding', 'gzip');
    });
    zipped.route('/', app);
    const res = await get(`${await listen(zipped)}/events`);
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(await bodyOf(res)).toString()).toContain('"delta":"zipped"');
  });

  it('writes nothing when the handler answers with another response after all (a refusal after the stream was made)', async () => {
    const app = new Hono();
    const writes: number[] = [];
    app.get('/events', (c) => {
      const out = new EventStream(new EventEncoder(), {}, recordingWrites(c.env, writes));
      out.raw(': connected\n\n');
      setImmediate(() => {
        out.send([delta('late')]);
        out.close();
      });
      return c.json({ error: 'refused', code: 'SERVICE_UNAVAILABLE' }, 503);
    });
    const base = await listen(app);
    const res = await get(`${base}/events`);
    expect(res.statusCode).toBe(503);
    expect(JSON.parse((await bodyOf(res)).toString())).toEqual({ error: 'refused', code: 'SERVICE_UNAVAILABLE' });
    // The stream's bytes had nowhere to go, and went nowhere: the server answers the next request as ever.
    const again = await get(`${base}/events`);
    expect(again.statusCode).toBe(503);
    await bodyOf(again);
    expect(writes).toEqual([]);
  });

  it('tells its holder when the client leaves', async () => {
    let cancelled!: () => void;
    const left = new Promise<void>((resolve) => (cancelled = resolve));
    const base = await listen(
      streamingApp((out) => {
        out.onCancel(cancelled);
        out.raw(': connected\n\n');
      }),
    );
    const res = await get(`${base}/events`);
    res.once('data', () => res.destroy());
    await left;
  });

  it('makes the producer wait while the client reads slower, and lets it go on as it catches up', async () => {
    let stream!: EventStream;
    let opened!: () => void;
    const open = new Promise<void>((resolve) => (opened = resolve));
    const base = await listen(
      streamingApp((out) => {
        stream = out;
        out.raw(': connected\n\n');
        opened();
      }),
    );
    const res = await get(`${base}/events`);
    res.pause();
    await open;
    const big = 'x'.repeat(64 * 1024);
    // Each turn's frames are one write; the socket and the client's buffers fill, then the response's.
    while (!stream.backlogged) {
      stream.send([delta(big)]);
      await new Promise((resolve) => setImmediate(resolve));
    }
    const ready = stream.ready();
    res.resume();
    await ready;
    expect(stream.backlogged).toBe(false);
    stream.close();
    await bodyOf(res);
  });
});
