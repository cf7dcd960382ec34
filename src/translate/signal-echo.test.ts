import { EventType } from '@ag-ui/core';
import { describe, expect, it } from 'vitest';
import type { SignalEchoChunk } from './chunks.js';
import { signalEchoEvents } from './signal-echo.js';

const echo = (type: SignalEchoChunk['type'], data: Record<string, unknown>) => ({ type, data, runId: 'r1' }) as unknown as SignalEchoChunk;

describe('signalEchoEvents', () => {
  it('shows a user message as a user text message, its attributes in metadata', () => {
    expect(signalEchoEvents(echo('data-user-message', { id: 's1', type: 'user-message', contents: 'hi', attributes: { via: 'sms' } }))).toEqual([
      { type: EventType.TEXT_MESSAGE_START, messageId: 's1', role: 'user', metadata: { attributes: { via: 'sms' } } },
      { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 's1', delta: 'hi' },
      { type: EventType.TEXT_MESSAGE_END, messageId: 's1' },
    ]);
  });

  it('shows any other signal as a signal.<type> activity, its tag defaulting to its type', () => {
    expect(signalEchoEvents(echo('data-signal', { id: 's2', type: 'notification', contents: 'build green' }))).toEqual([
      {
        type: EventType.ACTIVITY_SNAPSHOT,
        messageId: 's2',
        activityType: 'signal.notification',
        content: { tagName: 'notification', contents: 'build green', attributes: {} },
      },
    ]);
  });
});
