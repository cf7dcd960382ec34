import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { serverLogger } from './server-logger.js';

/** A stream that collects what is written; `tty` makes it look like a terminal. */
function sink(tty = false) {
  const stream = Object.assign(new PassThrough(), tty ? { isTTY: true } : {});
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { stream, text: () => text };
}

const ANSI = /\u001b\[/;

describe('serverLogger', () => {
  it('writes JSON lines to a pipe or a file', () => {
    const out = sink();
    serverLogger({}, out.stream).info({ url: 'http://x' }, 'listening');
    expect(JSON.parse(out.text())).toMatchObject({ level: 30, msg: 'listening', url: 'http://x' });
  });

  it('writes lines a person reads, in colour, to a terminal', () => {
    const out = sink(true);
    serverLogger({}, out.stream).info({ url: 'http://x' }, 'listening');
    expect(() => JSON.parse(out.text())).toThrow();
    expect(out.text()).toContain('listening');
    expect(out.text()).toMatch(ANSI);
  });

  it('LOG_FORMAT forces either', () => {
    const json = sink(true);
    serverLogger({ LOG_FORMAT: 'json' }, json.stream).warn('careful');
    expect(JSON.parse(json.text())).toMatchObject({ level: 40, msg: 'careful' });
    const pretty = sink();
    serverLogger({ LOG_FORMAT: 'pretty' }, pretty.stream).warn('careful');
    expect(pretty.text()).toMatch(/WARN.*careful/);
    expect(pretty.text()).not.toMatch(ANSI); // no colour codes into a file
  });

  it('LOG_LEVEL holds in both formats', () => {
    for (const LOG_FORMAT of ['json', 'pretty'] as const) {
      const out = sink();
      const log = serverLogger({ LOG_FORMAT, LOG_LEVEL: 'warn' }, out.stream);
      log.info('hidden');
      log.error('shown');
      expect(out.text()).not.toContain('hidden');
      expect(out.text()).toContain('shown');
    }
  });
});
