import type { Agent } from '@mastra/core/agent';
import { afterAll, describe, expect, it } from 'vitest';
import { testRedis, quietLogger } from '../../test/support/redis.js';
import { threadLeaseKey } from '../threads/thread-lease.js';
import type { RunEndings } from '../threads/run-endings.js';
import type { ToolProxy } from '../runs/tool-proxy.js';
import { RecoveryGate } from '../threads/recovery-gate.js';
import { RedisThreadControl } from './redis-thread-control.js';
import { ThreadHolders, type LocalLeases } from './thread-holders.js';

const redis = testRedis('thread-control');
afterAll(() => redis.cleanup());

const thread = { resourceId: 'alice', threadId: 't1' };

/**
 * The part of a Mastra agent that `send` touches, as one process's Mastra answers while its run
 * is finishing: the thread looks idle and every send answers `deliver` (the case the holder sends
 * again, for up to 2 s) and is dropped (nothing to take back). `sent` counts what reached this
 * process's Mastra.
 */
function finishingAgent() {
  const agent = {
    id: 'demo',
    sent: 0,
    getActiveThreadRunId: () => undefined,
    sendMessage: () => {
      agent.sent++;
      return { signal: { id: `signal-${agent.sent}` }, accepted: Promise.resolve({ action: 'deliver', runId: 'run-b' }) };
    },
    cancelQueuedMessages: () => ({ cancelledSignalIds: [] }),
    approved: [] as string[],
    sendToolApproval: async ({ toolCallId }: { toolCallId: string }) => {
      agent.approved.push(toolCallId);
      return { accepted: true, runId: 'run-b', toolCallId };
    },
  };
  return agent;
}

/** A bridge process's thread control, whose leases say whether it holds `thread` (and whether any process does). */
async function controlOf(agent: ReturnType<typeof finishingAgent>, holds: boolean, { idle = false } = {}) {
  const leases: LocalLeases = { holdsLease: (key) => holds && key === threadLeaseKey(thread), getLeaseOwner: async () => (idle ? undefined : 'run-b') };
  const agents = { get: () => agent as unknown as Agent };
  const endings = { ended: async () => {}, track: () => {} } as unknown as RunEndings;
  const control = new RedisThreadControl(
    await redis.connect(),
    new ThreadHolders(leases, new RecoveryGate()),
    agents,
    { logger: quietLogger },
    endings,
    {} as ToolProxy,
  );
  await control.start();
  return control;
}

describe('RedisThreadControl', () => {
  it('a send the holder took is answered by the holder alone, however long it takes: never sent here too', { timeout: 20_000 }, async () => {
    const onA = finishingAgent();
    const onB = finishingAgent();
    const a = await controlOf(onA, false);
    await controlOf(onB, true);
    const answer = await a.send(onA as unknown as Agent, thread, { message: 'hello' }, {});
    // B sent it again and again past what looked like a finishing run (longer than A's 2 s wait to be taken).
    expect(onB.sent).toBeGreaterThan(100);
    expect(answer).toMatchObject({ action: 'deliver', runId: 'run-b' });
    expect(onA.sent).toBe(0);
  });

  it('an approval is given where the run waits: by the holder of the thread, not here', async () => {
    const onA = finishingAgent();
    const onB = finishingAgent();
    const a = await controlOf(onA, false);
    await controlOf(onB, true);
    const answer = await a.answerCall(onA as unknown as Agent, thread, { approval: { toolCallId: 'call-1', approved: true } });
    expect(answer).toEqual({ runId: 'run-b', toolCallId: 'call-1' });
    expect({ onA: onA.approved, onB: onB.approved }).toEqual({ onA: [], onB: ['call-1'] });
  });

  it('an approval of a run nobody holds any more (its process gone) is given here', async () => {
    const onA = finishingAgent();
    const a = await controlOf(onA, false, { idle: true });
    await a.answerCall(onA as unknown as Agent, thread, { approval: { toolCallId: 'call-2', approved: false, reason: 'no' } });
    expect(onA.approved).toEqual(['call-2']);
  });
});
