import type { Message } from '@ag-ui/core';
import { describe, expect, it } from 'vitest';
import { contentsUrlDetails, createUrlPolicy, messageUrlDetails } from './url-policy.js';

describe('createUrlPolicy', () => {
  it('allows no remote URL by default', () => {
    const policy = createUrlPolicy([]);
    for (const url of [
      'http://example.com/a.png',
      'https://127.0.0.1/',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]:8080/x',
      'http://localhost/',
    ]) {
      expect(policy.problem(url), url).toMatch(/not allowed/);
    }
  });

  it('refuses every scheme but http(s) and data:', () => {
    const policy = createUrlPolicy(['example.com']);
    for (const url of ['file:///etc/passwd', 'ftp://example.com/a', 'gs://bucket/a', 's3://bucket/a', 'javascript:alert(1)']) {
      expect(policy.problem(url), url).toMatch(/scheme/);
    }
  });

  it('passes data: URLs and values that are not URLs (base64, provider file ids)', () => {
    const policy = createUrlPolicy([]);
    for (const value of ['data:image/png;base64,iVBORw0KGgo=', 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB', 'file-abc123', '', 'not a url']) {
      expect(policy.problem(value), value).toBeUndefined();
    }
  });

  it('matches exact hosts case-insensitively, on any port', () => {
    const policy = createUrlPolicy(['CDN.example.com', '[::1]']);
    expect(policy.problem('https://cdn.example.com/a.png')).toBeUndefined();
    expect(policy.problem('http://CDN.EXAMPLE.COM:8443/a.png')).toBeUndefined();
    expect(policy.problem('http://[::1]:9/x')).toBeUndefined();
    expect(policy.problem('https://example.com/a.png')).toMatch(/"example.com"/);
    expect(policy.problem('https://x.cdn.example.com/a.png')).toMatch(/not allowed/);
  });

  it('matches *.example.com against subdomains only, at any depth', () => {
    const policy = createUrlPolicy(['*.example.com']);
    expect(policy.problem('https://a.example.com/')).toBeUndefined();
    expect(policy.problem('https://a.b.example.com/')).toBeUndefined();
    expect(policy.problem('https://example.com/')).toMatch(/not allowed/);
    expect(policy.problem('https://evilexample.com/')).toMatch(/not allowed/);
    expect(policy.problem('https://example.com.evil.net/')).toMatch(/not allowed/);
  });

  it('reads the host as the fetch would (user info and tricks do not fool it)', () => {
    const policy = createUrlPolicy(['cdn.example.com']);
    expect(policy.problem('http://cdn.example.com@10.0.0.1/')).toMatch(/"10.0.0.1"/);
    expect(policy.problem('http://10.0.0.1/#cdn.example.com')).toMatch(/"10.0.0.1"/);
    expect(policy.problem('http://0x7f000001/')).toMatch(/"127.0.0.1"/);
  });
});

describe('messageUrlDetails', () => {
  const policy = createUrlPolicy(['cdn.example.com']);

  it('names each refused user part, whatever its source type says', () => {
    const messages: Message[] = [
      { id: 's', role: 'system', content: 'http://10.0.0.1/ in text is fine' },
      {
        id: 'u',
        role: 'user',
        content: [
          { type: 'text', text: 'http://10.0.0.1/' },
          { type: 'image', source: { type: 'url', value: 'http://10.0.0.1/a.png' } },
          { type: 'image', source: { type: 'url', value: 'https://cdn.example.com/a.png' } },
          { type: 'document', source: { type: 'data', value: 'http://10.0.0.2/', mimeType: 'application/pdf' } },
          { type: 'audio', source: { type: 'data', value: 'AAAA', mimeType: 'audio/wav' } },
        ],
      },
    ];
    expect(messageUrlDetails(messages, policy)).toEqual([
      { path: 'messages.1.content.1.source.value', message: expect.stringContaining('10.0.0.1') },
      { path: 'messages.1.content.3.source.value', message: expect.stringContaining('10.0.0.2') },
    ]);
  });

  it('leaves string content and non-user messages alone', () => {
    expect(messageUrlDetails([{ id: 'u', role: 'user', content: 'http://10.0.0.1/' }], policy)).toEqual([]);
  });
});

describe('contentsUrlDetails', () => {
  it('names each refused file part under the given path', () => {
    const policy = createUrlPolicy([]);
    const contents = [
      { type: 'text', text: 'look' },
      { type: 'file', data: 'http://10.0.0.1/a.png', mediaType: 'image/png' },
      { type: 'file', data: 'data:image/png;base64,AAAA', mediaType: 'image/png' },
    ];
    expect(contentsUrlDetails(contents, 'message.contents', policy)).toEqual([
      { path: 'message.contents.1.data', message: expect.stringContaining('10.0.0.1') },
    ]);
    expect(contentsUrlDetails('http://10.0.0.1/', 'message', policy)).toEqual([]);
  });
});
