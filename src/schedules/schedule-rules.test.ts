import { describe, expect, it } from 'vitest';
import { timingProblems } from './schedule-rules.js';

describe('timingProblems', () => {
  it('takes 5 fields, or 6 with seconds, in an IANA time zone', () => {
    expect(timingProblems('0 9 * * *', 'Europe/Oslo', 60)).toEqual([]);
    expect(timingProblems('*/2 * * * * *', undefined, 1)).toEqual([]);
    expect(timingProblems('0 9 * *', undefined, 60)).toEqual([{ path: 'cron', message: expect.stringContaining('4 fields') }]);
    expect(timingProblems('0 0 9 * * * 2030', undefined, 60)).toEqual([{ path: 'cron', message: expect.stringContaining('7 fields') }]);
    expect(timingProblems('61 9 * * *', undefined, 60)).toEqual([{ path: 'cron', message: expect.any(String) }]);
    expect(timingProblems('0 9 * * *', 'Mars/Olympus', 60)).toEqual([{ path: 'timezone', message: 'Mars/Olympus is not an IANA time zone' }]);
  });

  it('refuses a cron that fires more often than the minimum, also only now and then', () => {
    expect(timingProblems('* * * * *', undefined, 60)).toEqual([]);
    expect(timingProblems('*/30 * * * * *', undefined, 60)).toEqual([{ path: 'cron', message: 'fires every 30 s: at most once every 60 s' }]);
    expect(timingProblems('0,1 * * * *', undefined, 120)).toEqual([{ path: 'cron', message: 'fires every 60 s: at most once every 120 s' }]);
    expect(timingProblems('0 * * * *', undefined, 3600)).toEqual([]);
  });
});
