import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { pinoLogger } from './pino-logger.js';

describe('pinoLogger', () => {
  it('writes each call as one JSON line: level, msg, and the meta fields', () => {
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    const logger = pinoLogger(pino({ level: 'info' }, sink));
    logger.debug('not at info');
    logger.info('hello', { reqId: 'r1' });
    logger.warn('careful');
    logger.error('broke', { stack: 'Error: broke\n    at x' });
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [30, 'hello'],
      [40, 'careful'],
      [50, 'broke'],
    ]);
    expect(lines[0]).toMatchObject({ reqId: 'r1' });
    expect(lines[2]).toMatchObject({ stack: 'Error: broke\n    at x' });
  });
});
