import { describe, expect, it } from 'vitest';
import { hostCheck } from './host-check.js';

describe('hostCheck', () => {
  it('bound to loopback: the loopback names and the allowed ones, any port; a foreign name is refused (DNS rebinding)', () => {
    const accepts = hostCheck({ bind: '127.0.0.1', allowed: ['Bridge.Internal'] });
    for (const host of ['localhost:4111', '127.0.0.1:4111', '[::1]:4111', 'localhost', 'bridge.internal:80']) expect(accepts?.(host), host).toBe(true);
    for (const host of ['evil.example:4111', 'localhost.evil.example', '127.0.0.1.nip.io', '', undefined]) expect(accepts?.(host), String(host)).toBe(false);
  });

  it('bound elsewhere: any host unless a list is given', () => {
    expect(hostCheck({ bind: '0.0.0.0' })).toBeUndefined();
    const accepts = hostCheck({ bind: '0.0.0.0', allowed: ['bridge.example.com'] });
    expect(accepts?.('bridge.example.com')).toBe(true);
    expect(accepts?.('localhost')).toBe(false);
  });
});
