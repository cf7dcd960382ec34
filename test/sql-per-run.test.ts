import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventType, type BaseEvent, type Message } from '@ag-ui/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assistantText, ofType, runInput, runStrict, uid, userMessage } from './support/agui.js';
import { useTestBridge } from './support/server.js';
import { sqlLog } from './support/sql-log.js';

/**
 * What a run costs the database, counted statement by statement on LibSQL, beside what Mastra's own
 * `agent.stream()` issues for the same answer on the same storage. The bounds hold the bridge's
 * share where it stands (docs/performance.md, "Statements per run", says which remain and why), so
 * that it cannot creep back; Mastra's own share may move with Mastra.
 */
const BRIDGE_SHARE = { first: 11, later: 18 };

const dir = mkdtempSync(join(tmpdir(), 'agui-sql-'));
const sql = sqlLog(`file:${join(dir, 'sql.db')}`);
// The run's last write is the bridge's inbox entry going: counting stops there, not on a timer.
const inboxCleared = () => sql.next((statement) => /^(DELETE FROM|INSERT INTO) "mastra_thread_state"/.test(statement));

describe('SQL statements per run, on LibSQL', () => {
  const tb = useTestBridge({ libsqlClient: sql.client });
  const counts: Record<'bridgeFirst' | 'bridgeLater' | 'mastraFirst' | 'mastraLater', string[]> = {
    bridgeFirst: [],
    bridgeLater: [],
    mastraFirst: [],
    mastraLater: [],
  };

  async function bridgeRun(threadId: string, messages: Message[]): Promise<{ statements: string[]; events: BaseEvent[] }> {
    const cleared = inboxCleared();
    sql.start();
    const { events } = await runStrict(`${tb.base}/run`, runInput({ threadId, messages }));
    await cleared;
    return { statements: sql.stop(), events };
  }

  async function mastraRun(threadId: string, text: string): Promise<string[]> {
    sql.start();
    const output = await tb.demo.stream([{ role: 'user', content: text }], { memory: { thread: threadId, resource: 'sql-user' } });
    for await (const chunk of output.fullStream) void chunk;
    return sql.stop();
  }

  beforeAll(async () => {
    // Storage creates its tables on first use: a run on another thread first.
    await bridgeRun(uid('warm'), [userMessage('warm up')]);
    const threadId = uid('thread');
    const first = userMessage('one two three four five');
    const opened = await bridgeRun(threadId, [first]);
    counts.bridgeFirst = opened.statements;
    const answer = ofType(opened.events, EventType.TEXT_MESSAGE_START)[0] as BaseEvent & { messageId: string };
    const reply: Message = { id: answer.messageId, role: 'assistant', content: assistantText(opened.events) };
    counts.bridgeLater = (await bridgeRun(threadId, [first, reply, userMessage('six seven eight nine ten')])).statements;
    const mastraThread = uid('mastra-thread');
    counts.mastraFirst = await mastraRun(mastraThread, 'one two three four five');
    counts.mastraLater = await mastraRun(mastraThread, 'six seven eight nine ten');
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("a first run on a new thread adds at most BRIDGE_SHARE.first statements to Mastra's own", () => {
    const { bridgeFirst, mastraFirst } = counts;
    expect(mastraFirst.length).toBeGreaterThan(0);
    expect(bridgeFirst.length - mastraFirst.length, bridgeFirst.join('\n')).toBeLessThanOrEqual(BRIDGE_SHARE.first);
  });

  it("a later run on the same thread adds at most BRIDGE_SHARE.later statements to Mastra's own", () => {
    const { bridgeLater, mastraLater } = counts;
    expect(mastraLater.length).toBeGreaterThan(0);
    expect(bridgeLater.length - mastraLater.length, bridgeLater.join('\n')).toBeLessThanOrEqual(BRIDGE_SHARE.later);
  });

  it('reads the thread row once before the run, and stores the input before it (acknowledged means committed)', () => {
    const { bridgeFirst, bridgeLater } = counts;
    const threadReads = (statements: string[]) => statements.filter((s) => /FROM mastra_threads WHERE id = \?/.test(s)).length;
    // First run: the bridge's read, its read under the thread's lock before creating it, Mastra's two.
    expect(threadReads(bridgeFirst)).toBe(4);
    // Later run: the bridge's one read, Mastra's two.
    expect(threadReads(bridgeLater)).toBe(3);
    for (const statements of [bridgeFirst, bridgeLater]) {
      const input = statements.findIndex((s) => s.startsWith('INSERT INTO "mastra_messages"'));
      const loopStart = statements.findIndex((s) => s.startsWith('INSERT INTO mastra_workflow_snapshot'));
      expect(input).toBeGreaterThanOrEqual(0);
      expect(input).toBeLessThan(loopStart);
    }
  });
});
