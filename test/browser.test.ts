import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readServerEnv } from '../src/server/env.js';
import { startServer, type RunningServer } from '../src/server/standalone.js';
import { uid } from './support/agui.js';
import {
  axeViolations,
  CHROMIUM_PATH,
  hasChromium,
  isEventStream,
  launchChromium,
  startCutProxy,
  type CutProxy,
  type ProxiedRequest,
} from './support/browser.js';
import { http, silentLogger } from './support/server.js';
import { openSse } from './support/sse.js';
import { useStandaloneServer } from './support/standalone.js';

/**
 * The demo page in real headless chromium (Debian's, driven by playwright-core), against the real
 * standalone server (`startServer`: LibSQL in a temp file, the scripted demo agent with
 * DEMO_DELAY_MS=20). The page is loaded through a TCP proxy that the drop test severs: a real
 * network cut, which the page's client (`BridgeAgent.connectAgent()`) survives by itself.
 */

if (!hasChromium) console.warn(`[browser tests] skipped: ${CHROMIUM_PATH} is missing (install it: apt-get install -y chromium)`);

const ARTIFACTS = new URL('./artifacts/', import.meta.url);

interface PageWindow {
  bridgeDemo: {
    threadId?: string;
    states: string[];
    log: Array<{ id?: number; type: string }>;
    lastSeq?: number;
    running: boolean;
  };
}

const longMessage = (words: number) => Array.from({ length: words }, (_, i) => `w${i}`).join(' ');

describe.skipIf(!hasChromium)(`the demo page in chromium${hasChromium ? '' : ` (skipped: ${CHROMIUM_PATH} is missing)`}`, () => {
  let dir: string;
  let server: RunningServer;
  let proxy: CutProxy;
  let browser: Browser;
  let context: BrowserContext | undefined;
  let problems: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agui-page-'));
    server = await startServer(readServerEnv({ PORT: '0', DATABASE_URL: `file:${join(dir, 'page.db')}`, DEMO_DELAY_MS: '20', SLOW_TASK_MS: '300' }), {
      retryMs: 250,
      logger: silentLogger,
    });
    proxy = await startCutProxy(server.url);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await proxy?.close();
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  afterEach(async () => {
    await context?.close();
    context = undefined;
    // Errors in the page fail the test that caused them.
    const seen = problems;
    problems = [];
    expect(seen).toEqual([]);
  });

  /** Opens the page for a fresh resource (so a new thread), through the proxy, and waits until it is live. */
  async function openPage(
    resourceId = uid('page-user'),
    viewport = { width: 1280, height: 900 },
    query = '',
    colorScheme: 'light' | 'dark' = 'light',
  ): Promise<{ page: Page; resourceId: string; threadId: string }> {
    context = await browser.newContext({ viewport, colorScheme });
    const page = await context.newPage();
    page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    page.on('console', (message) => {
      // A severed connection is reported by chromium itself; anything else is the page's fault.
      if (message.type() === 'error' && !/net::|Failed to load resource/.test(message.text())) problems.push(`console: ${message.text()}`);
    });
    await page.goto(`${proxy.origin}/?resource=${encodeURIComponent(resourceId)}${query}`);
    await page.waitForSelector('#connection[data-state="live"]');
    const threadId = await page.evaluate(() => (window as unknown as PageWindow).bridgeDemo.threadId as string);
    expect(threadId).toBeTruthy();
    return { page, resourceId, threadId };
  }

  /** Resolves once the page has applied a finished run and nothing runs. */
  const idle = (page: Page) =>
    page.waitForFunction(() => {
      const demo = (window as unknown as PageWindow).bridgeDemo;
      return !demo.running && demo.log.at(-1)?.type === 'RUN_FINISHED';
    });

  /** Types a message and sends it with the Send button; waits for the run it starts to end (unless told not to). */
  async function send(page: Page, text: string, wait = true): Promise<void> {
    const runs = await page.evaluate(() => (window as unknown as PageWindow).bridgeDemo.log.filter((e) => e.type === 'RUN_STARTED').length);
    await page.fill('#message', text);
    await page.click('#send');
    await page.waitForFunction((n) => (window as unknown as PageWindow).bridgeDemo.log.filter((e) => e.type === 'RUN_STARTED').length > n, runs);
    if (wait) await idle(page);
  }

  const bubbles = (page: Page, kind: 'user' | 'assistant') =>
    page.$$eval(`#transcript .item.${kind} .bubble`, (nodes) => nodes.map((n) => n.textContent ?? ''));

  const waitForBubble = (page: Page, kind: 'user' | 'assistant', test: string, mode: 'exact' | 'prefix' | 'contains' = 'exact') =>
    page.waitForFunction(
      ([selector, text, how]) =>
        [...document.querySelectorAll(selector)].some((n) => {
          const value = n.textContent ?? '';
          return how === 'exact' ? value === text : how === 'prefix' ? value.startsWith(text) : value.includes(text);
        }),
      [`#transcript .item.${kind} .bubble`, test, mode] as const,
    );

  it('sends a message and shows the streamed answer; the page is accessible (labels, aria-live log)', async () => {
    const { page } = await openPage();
    expect(await page.getAttribute('#transcript', 'aria-live')).toBe('polite');
    expect(await page.getAttribute('#transcript', 'role')).toBe('log');
    // Every form control has a label.
    const unlabeled = await page.$$eval('input, select, textarea', (controls) =>
      controls.filter((c) => !(c.id && document.querySelector(`label[for="${c.id}"]`)) && !c.getAttribute('aria-label')).map((c) => c.outerHTML),
    );
    expect(unlabeled).toEqual([]);

    // Watch the answer bubble grow: a streamed answer is seen in more than one state.
    await page.evaluate(() => {
      const seen = new Set<string>();
      (window as unknown as { seenTexts: Set<string> }).seenTexts = seen;
      new MutationObserver(() => {
        for (const n of document.querySelectorAll('#transcript .item.assistant .bubble')) seen.add(n.textContent ?? '');
      }).observe(document.querySelector('#transcript') as Node, { subtree: true, childList: true, characterData: true });
    });
    await send(page, 'hello from chromium, how are you today?');
    await waitForBubble(page, 'assistant', 'Echo: hello from chromium, how are you today?');
    expect(await bubbles(page, 'user')).toEqual(['hello from chromium, how are you today?']);
    expect(await bubbles(page, 'assistant')).toEqual(['Echo: hello from chromium, how are you today?']);
    const partial = await page.evaluate(() => [...(window as unknown as { seenTexts: Set<string> }).seenTexts].filter((t) => t && !t.endsWith('today?')));
    expect(partial.length).toBeGreaterThan(0);
    // "Sent: the agent is answering it." was true while the answer streamed, and no longer is.
    await page.waitForFunction(() => document.querySelector('#composer-status')?.textContent === '');
  });

  it('passes every axe-core rule, best practices included (contrast too), at 1280 and 390 px (its Chat and Panels views), light and dark, with a tool card, a run and a notice on it', async () => {
    const looks = [
      { viewport: { width: 1280, height: 900 }, colorScheme: 'light' },
      { viewport: { width: 390, height: 844 }, colorScheme: 'light' },
      { viewport: { width: 1280, height: 900 }, colorScheme: 'dark' },
    ] as const;
    for (const { viewport, colorScheme } of looks) {
      const { page } = await openPage(uid('a11y'), viewport, '', colorScheme);
      await send(page, 'What is the weather in Lisbon?');
      await send(page, 'please fail', false);
      await page.waitForSelector('#transcript .notice.error');
      expect(await axeViolations(page), `${viewport.width} px, ${colorScheme}`).toEqual([]);
      if (viewport.width < 600) {
        await page.click('.tabbar button[data-view="panels"]');
        expect(await axeViolations(page), `${viewport.width} px, ${colorScheme}, Panels view`).toEqual([]);
      }
      await context?.close();
      context = undefined;
    }
  });

  it('at 390 px, a tab bar switches between the chat and the threads and panels; picking a thread goes back to the chat', async () => {
    const { page } = await openPage(uid('narrow'), { width: 390, height: 844 });
    expect(await page.isVisible('.tabbar')).toBe(true);
    expect(await page.isVisible('#message')).toBe(true);
    expect(await page.isVisible('#threads')).toBe(false);
    await page.click('.tabbar button[data-view="panels"]');
    expect(await page.isVisible('#threads')).toBe(true);
    expect(await page.isVisible('#notify-form')).toBe(true);
    expect(await page.isVisible('#message')).toBe(false);
    expect(await page.getAttribute('.tabbar button[data-view="panels"]', 'aria-pressed')).toBe('true');
    await page.click('#threads .thread');
    expect(await page.isVisible('#message')).toBe(true);
    expect(await page.getAttribute('.tabbar button[data-view="chat"]', 'aria-pressed')).toBe('true');
    // A wide window has no tab bar: both views side by side.
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(await page.isVisible('.tabbar')).toBe(false);
    expect(await page.isVisible('#threads')).toBe(true);
  });

  it('names a new thread after its first message (its date beside it in the list), and keeps that name', async () => {
    const { page } = await openPage();
    expect(await page.textContent('#thread-title')).toBe('New chat');
    await send(page, 'What is the weather in Lisbon?');
    await page.waitForFunction(
      () => document.querySelector('#threads .thread[aria-pressed="true"] .thread-title')?.textContent === 'What is the weather in Lisbon?',
    );
    expect(await page.textContent('#thread-title')).toBe('What is the weather in Lisbon?');
    await send(page, 'and in Oslo?');
    expect(await page.$$eval('#threads .thread-title', (titles) => titles.map((t) => t.textContent))).toEqual(['What is the weather in Lisbon?']);
  });

  it('asks for a deletion, shows Approve / Decline, and approving resumes the run ("Deleted as requested"); a new tab says it was approved too', async () => {
    const { page, resourceId } = await openPage();
    await send(page, 'Please delete report.pdf');
    await page.waitForSelector('#approvals .approval');
    expect(await page.textContent('#approvals .approval')).toContain('delete_file');
    expect(await page.textContent('#approvals .approval code')).toBe('delete_file({"path":"report.pdf"})');
    expect(await page.getAttribute('#transcript .item.tool', 'data-status')).toBe('waiting');
    await page.click('#approvals .approval button:has-text("Approve")');
    await waitForBubble(page, 'assistant', 'Deleted as requested: {"deleted":"report.pdf"}');
    await idle(page);
    expect(await page.$$('#approvals .approval')).toHaveLength(0);
    // The card says how the call was answered, not only that it ran.
    expect(await page.getAttribute('#transcript .item.tool', 'data-status')).toBe('approved');
    expect(await page.textContent('#transcript .item.tool .chip')).toBe('approved');
    expect(await page.textContent('#transcript .item.tool .result')).toContain('"deleted": "report.pdf"');
    // A tab that did not click (here, opened after: the history) reads it from the result's metadata.
    await context?.close();
    const { page: fresh } = await openPage(resourceId);
    await fresh.waitForSelector('#transcript .item.tool[data-status="approved"]');
    expect(await fresh.textContent('#transcript .item.tool .chip')).toBe('approved');
  });

  it('lists pending approvals on load (a reload in a new tab) and declining tells the agent', async () => {
    const { page, resourceId } = await openPage();
    await send(page, 'delete notes.txt');
    await page.waitForSelector('#approvals .approval');
    // A new tab (no session state): the approval comes from GET /pending-approvals, the history from the snapshot.
    await context?.close();
    const { page: fresh } = await openPage(resourceId);
    await fresh.waitForSelector('#approvals .approval');
    expect(await fresh.textContent('#approvals .approval code')).toBe('delete_file({"path":"notes.txt"})');
    expect(await bubbles(fresh, 'user')).toEqual(['delete notes.txt']);
    await fresh.click('#approvals .approval button:has-text("Decline")');
    await waitForBubble(fresh, 'assistant', 'I did not delete the file', 'prefix');
    expect(await fresh.$$('#approvals .approval')).toHaveLength(0);
    await fresh.waitForSelector('#transcript .item.tool[data-status="declined"]');
    expect(await fresh.textContent('#transcript .item.tool .result')).toContain('was declined: Declined in the demo page');
  });

  it('pushes a notification from the panel: it appears, and wakes the agent (its echo appears)', async () => {
    const { page } = await openPage();
    await page.fill('#notify-source', 'github');
    await page.fill('#notify-kind', 'review');
    await page.fill('#notify-summary', 'PR #12 was approved');
    await page.selectOption('#notify-priority', 'urgent');
    await page.click('#notify-form button[type="submit"]');
    await page.waitForSelector('#transcript .item[data-activity="signal.notification"]');
    const card = await page.textContent('#transcript .item[data-activity="signal.notification"]');
    expect(card).toContain('github / review');
    expect(card).toContain('PR #12 was approved');
    expect(card).toContain('urgent');
    await waitForBubble(page, 'assistant', 'PR #12 was approved</notification>', 'contains');
    expect((await bubbles(page, 'assistant'))[0]).toMatch(/^Echo: <notification .*source="github".*>PR #12 was approved<\/notification>$/);
    // "Notification delivered: the agent is looking at it." is true while the run it woke lasts.
    await idle(page);
    await page.waitForFunction(() => document.querySelector('#action-status')?.textContent === '');
  });

  it('the Schedules panel: one made from a preset in the browser’s time zone, run now (the fire in the transcript, the last fire in the list), paused, resumed, deleted; axe-clean at 1280 and 390 px', async () => {
    const { page, threadId, resourceId } = await openPage();
    expect(await page.inputValue('#schedule-timezone')).toBe(await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone));
    expect(await page.isVisible('#schedule-cron')).toBe(false);
    await page.selectOption('#schedule-when', 'custom');
    expect(await page.isVisible('#schedule-cron')).toBe(true);
    await page.selectOption('#schedule-when', '0 * * * *');
    await page.fill('#schedule-prompt', 'Water the plants');
    await page.click('#schedule-form button[type="submit"]');
    await page.waitForSelector('#schedules li.schedule[data-status="active"]');
    expect(await page.textContent('#schedules li.schedule')).toContain('Water the plants 0 * * * *');
    const [stored] = (await http(`${server.url}/threads/${threadId}/schedules?resourceId=${resourceId}`)).body as Array<{ cron: string; prompt: string }>;
    expect(stored).toMatchObject({ cron: '0 * * * *', prompt: 'Water the plants' });

    await page.click('#schedules button[data-action="run"]');
    await page.waitForSelector('#transcript .item[data-activity="signal.notification"]');
    await waitForBubble(page, 'assistant', 'Water the plants', 'contains');
    await page.waitForFunction(() => document.querySelector('#schedules .schedule-fires')?.textContent?.includes('(succeeded)'));
    expect(await axeViolations(page), '1280 px').toEqual([]);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.click('.tabbar button[data-view="panels"]');
    expect(await page.isVisible('#schedules li.schedule')).toBe(true);
    expect(await axeViolations(page), '390 px').toEqual([]);

    await page.click('#schedules button[data-action="pause"]');
    await page.waitForSelector('#schedules li.schedule[data-status="paused"]');
    await page.click('#schedules button[data-action="resume"]');
    await page.waitForSelector('#schedules li.schedule[data-status="active"]');
    await page.click('#schedules button[data-action="delete"]');
    await page.waitForFunction(() => document.querySelector('#schedules')?.textContent === 'No schedule on this thread.');
    expect((await http(`${server.url}/threads/${threadId}/schedules?resourceId=${resourceId}`)).body).toEqual([]);
  });

  it('survives a real connection drop mid-run: the client reconnects with ?lastEventId=, nothing lost or doubled', async () => {
    const { page, resourceId, threadId } = await openPage();
    const ofThread = (r: ProxiedRequest) => isEventStream(r) && r.path.includes(`/threads/${threadId}/events`);
    // An undisturbed subscriber, straight to the server.
    const stayed = await openSse(`${server.url}/threads/${threadId}/events?resourceId=${resourceId}`);
    await stayed.waitForComment('connected');
    const from = proxy.requests.length;
    const text = longMessage(40);
    await send(page, text, false);
    await page.waitForFunction(() => (document.querySelector('#transcript .item.assistant .bubble')?.textContent ?? '').split(' ').length >= 6);
    expect(proxy.cut(ofThread)).toBe(1);

    // The client's own reconnect, with the last id it saw.
    const reconnect = await proxy.waitForRequest(ofThread, from);
    const resumedAfter = new URL(reconnect.path, proxy.origin).searchParams.get('lastEventId');
    expect(resumedAfter).toMatch(/^\d+$/);
    await page.waitForSelector('#connection[data-state="live"]');
    await waitForBubble(page, 'assistant', `Echo: ${text}`);
    await idle(page);
    await stayed.waitForCount('RUN_FINISHED', 1);

    const states = await page.evaluate(() => (window as unknown as PageWindow).bridgeDemo.states);
    expect(states.slice(0, 2)).toEqual(['connecting', 'live']);
    expect(states.slice(2)).toEqual(['reconnecting', 'live']);
    expect(await bubbles(page, 'user')).toEqual([text]);
    expect(await bubbles(page, 'assistant')).toEqual([`Echo: ${text}`]);
    // Event by event: the page applied exactly what the undisturbed subscriber got. Before that
    // only its opening snapshot, whose last frame carries the position just before the first live
    // event (the frames before it carry none, and the page had none yet).
    const log = await page.evaluate(() => (window as unknown as PageWindow).bridgeDemo.log);
    const firstLive = stayed.events[0].id;
    expect(log.filter((e) => (e.id ?? 0) < firstLive).map((e) => e.id)).toEqual([undefined, undefined, firstLive - 1]);
    expect(log.filter((e) => (e.id ?? 0) >= firstLive)).toEqual(stayed.events.map((e) => ({ id: e.id, type: e.event.type })));
    expect(Number(resumedAfter)).toBeLessThan(stayed.events.at(-1)?.id as number);
    await stayed.close();
  });

  it('shows the agent state (its working memory) live as remember changes it, equal to storage, and again after a reload', async () => {
    const { page, threadId, resourceId } = await openPage();
    const shown = async () => JSON.parse((await page.textContent('#agent-state')) ?? '{}') as unknown;
    expect(await shown()).toEqual({});
    await send(page, 'remember tea, no sugar');
    await waitForBubble(page, 'assistant', 'Noted: tea, no sugar');
    await send(page, 'remember the window seat');
    await waitForBubble(page, 'assistant', 'Noted: the window seat');
    await page.waitForFunction(() => (document.querySelector('#agent-state')?.textContent ?? '').includes('the window seat'));
    const stored = (await http(`${server.url}/threads/${threadId}/state?resourceId=${resourceId}`)).body as { state: unknown };
    expect(await shown()).toEqual(stored.state);
    expect(stored.state).toEqual({ facts: ['tea, no sugar', 'the window seat'] });
    // The working-memory call is not a tool card: its effect is the panel.
    expect(await page.$$('#transcript .item.tool')).toHaveLength(0);
    await page.reload();
    await page.waitForSelector('#connection[data-state="live"]');
    expect(await shown()).toEqual(stored.state);
  });

  it('nests a sub-agent’s answer under the call that delegated to it, named after the sub-agent', async () => {
    const { page } = await openPage();
    await send(page, 'research tides');
    await waitForBubble(page, 'assistant', 'Summary: Findings on tides', 'prefix');
    const nested = await page.$$eval('#transcript .item.assistant.subagent', (nodes) =>
      nodes.map((n) => [n.querySelector('.who')?.textContent, n.querySelector('.bubble')?.textContent]),
    );
    expect(nested).toEqual([['researcher', 'Findings on tides: three sources agree, and none disagrees.']]);
    // In order: the delegating call's card, then the sub-agent's answer, then the agent's summary.
    const order = await page.$$eval('#transcript > .item', (nodes) => nodes.map((n) => n.className.split(' ').slice(1).join(' ')));
    expect(order.slice(-3)).toEqual(['tool', 'assistant subagent', 'assistant']);
    // The delegating card does not repeat the answer shown under it as raw JSON.
    expect(await page.$$eval('#transcript > .item.tool', (cards) => cards.map((c) => c.querySelector('.result')?.textContent ?? null))).toEqual([null]);
  });

  it('nests a sub-agent’s own tool call, and its approval: the card names the sub-agent’s tool, approving resumes it', async () => {
    const { page } = await openPage();
    await send(page, 'research and delete old-notes.txt');
    await page.waitForSelector('#approvals .approval');
    expect(await page.textContent('#approvals .approval code')).toBe('delete_file({"path":"old-notes.txt"})');
    await page.click('#approvals .approval button:has-text("Approve")');
    await waitForBubble(page, 'assistant', 'Summary: Deleted as requested', 'prefix');
    await idle(page);
    const nested = await page.$$eval('#transcript .item.subagent', (nodes) => nodes.map((n) => n.className.split(' ').slice(1).join(' ')));
    expect(nested).toEqual(['tool subagent', 'assistant subagent']);
    expect(await page.textContent('#transcript .item.tool.subagent .result')).toContain('"deleted": "old-notes.txt"');
    expect(await page.$$('#approvals .approval')).toHaveLength(0);
  });

  it.each([
    [390, 844],
    [1280, 800],
  ])('at %i px wide the last message stays above the composer, with an approval card open too; screenshot', async (width, height) => {
    const { page } = await openPage(uid('page-user'), { width, height });
    for (const text of ['hello there', 'think about rivers', 'what is the weather in Oslo']) {
      await send(page, text);
      await idle(page);
    }
    await send(page, 'delete notes.txt');
    await page.waitForSelector('#approvals .approval');
    const box = (selector: string) => page.$eval(selector, (n) => ({ top: n.getBoundingClientRect().top, bottom: n.getBoundingClientRect().bottom }));
    const [last, approvals, composer] = [await box('#transcript > .item:last-child'), await box('#approvals'), await box('.composer')];
    expect(last.bottom).toBeLessThanOrEqual(Math.min(approvals.top, composer.top) + 1);
    expect(composer.bottom).toBeLessThanOrEqual(height + 1); // the composer is on screen
    await page.screenshot({ path: new URL(`page-${width}.png`, ARTIFACTS).pathname });
  });

  it('after a reload, reopens with ?lastEventId= from sessionStorage: the same transcript, nothing twice', async () => {
    const { page, threadId } = await openPage();
    await send(page, 'first before reload');
    await send(page, 'think about rivers');
    const before = await page.innerText('#transcript');
    const lastSeq = await page.evaluate(() => (window as unknown as PageWindow).bridgeDemo.lastSeq as number);
    const from = proxy.requests.length;
    await page.reload();
    await page.waitForSelector('#connection[data-state="live"]');
    const reopened = await proxy.waitForRequest((r) => isEventStream(r) && r.path.includes(`/threads/${threadId}/events`), from);
    expect(reopened.path).toContain(`lastEventId=${lastSeq}`);
    expect(reopened.path).not.toContain('snapshot=1');
    expect(await page.innerText('#transcript')).toBe(before);
    await send(page, 'after the reload');
    await waitForBubble(page, 'assistant', 'Echo: after the reload');
    expect(await bubbles(page, 'user')).toEqual(['first before reload', 'think about rivers', 'after the reload']);
    expect(await bubbles(page, 'assistant')).toEqual(['Echo: first before reload', 'Here is my answer to: think about rivers', 'Echo: after the reload']);
  });

  it('a reload in the middle of a run resumes from where the run started: its answer whole, once', async () => {
    const { page, threadId } = await openPage();
    await send(page, 'before the run');
    const text = longMessage(40);
    await send(page, text, false);
    await waitForBubble(page, 'assistant', 'Echo: w0 w1 w2', 'prefix');
    const from = proxy.requests.length;
    await page.reload();
    const reopened = await proxy.waitForRequest((r) => isEventStream(r) && r.path.includes(`/threads/${threadId}/events`), from);
    expect(reopened.path).toMatch(/lastEventId=\d+/);
    await waitForBubble(page, 'assistant', `Echo: ${text}`);
    await idle(page);
    expect(await bubbles(page, 'user')).toEqual(['before the run', text]);
    expect(await bubbles(page, 'assistant')).toEqual(['Echo: before the run', `Echo: ${text}`]);
  });

  it('queues a message while the agent answers (it runs next), and Stop cancels a run', async () => {
    const { page } = await openPage();
    await send(page, longMessage(60), false);
    await waitForBubble(page, 'assistant', 'Echo: w0', 'prefix');
    await page.fill('#message', 'queued follow-up');
    await page.click('#queue');
    await page.waitForFunction(() => document.querySelector('#composer-status')?.textContent === 'Queued: the agent answers it after the current answer.');
    // Shown at once, marked as queued, before the run that reads it starts.
    await page.waitForSelector('#transcript .item.user.pending');
    expect(
      await page.$$eval('#transcript .item.user.pending', (items) =>
        items.map((i) => [i.querySelector('.who')?.textContent, i.querySelector('.bubble')?.textContent]),
      ),
    ).toEqual([['You · queued', 'queued follow-up']]);
    await waitForBubble(page, 'assistant', 'Echo: queued follow-up');
    await idle(page);
    expect(await bubbles(page, 'user')).toEqual([longMessage(60), 'queued follow-up']);
    expect(await page.$$('#transcript .item.user.pending')).toHaveLength(0);

    await send(page, longMessage(60), false);
    await waitForBubble(page, 'assistant', 'Echo: w0', 'prefix');
    expect(await page.isVisible('#working')).toBe(true);
    await page.click('#stop');
    await page.waitForSelector('#transcript .notice:has-text("Run cancelled.")');
    await idle(page);
    expect(await page.isVisible('#stop')).toBe(false);
    expect((await bubbles(page, 'assistant')).at(-1)?.length).toBeLessThan(`Echo: ${longMessage(60)}`.length);
  });

  it('a failed run and a stopped one say so where they ended, once, live and in a new tab (from the history)', async () => {
    const { page, resourceId } = await openPage();
    await send(page, 'please fail now', false);
    await page.waitForSelector('#transcript .notice:has-text("Run failed")');
    await page.waitForFunction(() => !(window as unknown as PageWindow).bridgeDemo.running);
    await send(page, longMessage(60), false);
    await waitForBubble(page, 'assistant', 'Echo: w0', 'prefix');
    await page.click('#stop');
    await page.waitForSelector('#transcript .notice:has-text("Run cancelled.")');
    await idle(page);
    // What follows each user message: its notice (the bridge's run-end message), once.
    const transcriptOf = (p: Page) =>
      p.$$eval('#transcript .item', (items) =>
        items.flatMap((i) =>
          i.classList.contains('user')
            ? ['user']
            : i.querySelector('.notice')
              ? [i.querySelector('.notice')?.textContent ?? '']
              : i.classList.contains('assistant')
                ? ['assistant']
                : [],
        ),
      );
    const expected = ['user', 'Run failed: demo model failure (MODEL_ERROR)', 'user', 'assistant', 'Run cancelled.'];
    expect(await transcriptOf(page)).toEqual(expected);
    await context?.close();
    const { page: fresh } = await openPage(resourceId);
    await fresh.waitForSelector('#transcript .notice:has-text("Run cancelled.")');
    expect(await transcriptOf(fresh)).toEqual(expected);
  });

  it('renders reasoning (collapsible), tool calls with args and results, background tasks and state signals; screenshot', async () => {
    const { page } = await openPage('demo-user');
    await send(page, 'hello there');
    await send(page, 'think about tea');
    const reasoning = page.locator('#transcript .item.reasoning details');
    expect(await reasoning.getAttribute('open')).toBeNull();
    await page.click('#transcript .item.reasoning summary');
    expect(await page.textContent('#transcript .item.reasoning .reasoning-text')).toBe('Let me think about that step by step.');
    await send(page, 'What is the weather in Lisbon?');
    const tool = page.locator('#transcript .item.tool', { hasText: 'get_weather' });
    expect(await tool.locator('.args').textContent()).toBe(JSON.stringify({ city: 'Lisbon' }, null, 2));
    expect(JSON.parse((await tool.locator('.result').textContent()) as string)).toMatchObject({ city: 'Lisbon' });
    await page.fill('#message', 'run the slow job');
    await page.click('#send');
    await page.waitForSelector('#transcript .item[data-activity="background-task"] .task-completed');
    await waitForBubble(page, 'assistant', 'The background task has finished.');
    await idle(page);
    await page.click('#state-form button[type="submit"]');
    await page.waitForSelector('#transcript .item[data-activity="signal.state"]');
    await waitForBubble(page, 'assistant', 'Echo: <state>Cart: 2 items, total 40 EUR</state>');
    await idle(page);
    await page.click('#notify-form button[type="submit"]');
    await waitForBubble(page, 'assistant', 'Build #42 passed</notification>', 'contains');
    await idle(page);
    await send(page, 'Please delete report.pdf');
    await page.waitForSelector('#approvals .approval');
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.setViewportSize({ width: 1280, height: 1200 });
    await page.screenshot({ path: new URL('page.png', ARTIFACTS).pathname });
  });
  // ── workflows ──────────────────────────────────────────────────────────

  /** Each workflow run's step timeline: `[name, status]` per step. */
  const timelines = (page: Page) =>
    page.$$eval('#transcript .item.steps', (items) =>
      items.map((item) => [...item.querySelectorAll('.step')].map((s) => [s.querySelector('.step-name')?.textContent, (s as HTMLElement).dataset.status])),
    );

  /** Picks an agent or workflow in the header's picker; resolves once the thread is followed as its. */
  async function pick(page: Page, agentId: string) {
    await page.selectOption('#agent', agentId);
    await page.waitForFunction((id) => {
      const agent = (window as unknown as { bridgeDemo: { agent?: { bridgeAgentId?: string; connection: { state: string } } } }).bridgeDemo.agent;
      return agent?.bridgeAgentId === id && agent.connection.state === 'live';
    }, agentId);
  }

  it.each([
    [1280, 800],
    [390, 844],
  ])('at %i px: picks the workflow, shows its steps and state, resumes the review step from a form made from its schema; screenshot', async (width, height) => {
    const { page, resourceId, threadId } = await openPage(uid('page-user'), { width, height });
    expect(await page.$$eval('#agent option', (nodes) => nodes.map((n) => n.textContent))).toEqual(
      expect.arrayContaining(['Demo Agent', 'draft-and-send (workflow)']),
    );
    // The picker reads whole at either width.
    expect((await page.locator('#agent').boundingBox())!.width).toBeGreaterThanOrEqual(160);
    await pick(page, 'draft-and-send');
    // What only an agent takes is put away: queueing, signals.
    expect(await page.isHidden('#queue')).toBe(true);
    expect(await page.isHidden('#notify-form')).toBe(true);
    await send(page, 'tea');
    await page.waitForSelector('#approvals form.resume');
    expect(await bubbles(page, 'user')).toEqual(['tea']);
    expect(await bubbles(page, 'assistant')).toEqual(['Draft about tea.']);
    expect(await timelines(page)).toEqual([
      [
        ['draft', 'done'],
        ['review', 'waiting'],
      ],
    ]);
    await page.waitForFunction(() => (document.querySelector('#agent-state')?.textContent ?? '').includes('"drafts": 1'));
    const form = page.locator('#approvals form.resume');
    expect(await form.locator('strong').textContent()).toBe('Waits for a person to approve (or edit) the draft.');
    expect(await form.locator('.resume-payload').textContent()).toBe('draft: Draft about tea.');
    expect(await form.locator('label', { hasText: 'edit' }).textContent()).toBe('edit (optional)');
    // On screen, above the composer, at either width.
    const [card, composer] = [await form.boundingBox(), await page.locator('.composer').boundingBox()];
    expect(card!.y + card!.height).toBeLessThanOrEqual(composer!.y + 1);
    expect(card!.y).toBeGreaterThanOrEqual(0);
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: new URL(`page-workflow-${width}.png`, ARTIFACTS).pathname });

    await form.locator('input[name="edit"]').fill('Tea, edited.');
    await form.locator('button', { hasText: 'Approve' }).click();
    await waitForBubble(page, 'assistant', 'Sent: Tea, edited.');
    await idle(page);
    expect(await page.$$('#approvals form.resume')).toHaveLength(0);
    expect(await timelines(page)).toEqual([
      [
        ['draft', 'done'],
        ['review', 'answered'],
      ],
      [
        ['review', 'done'],
        ['send', 'done'],
      ],
    ]);
    const stored = (await http(`${server.url}/threads/${threadId}/state?resourceId=${resourceId}&agentId=draft-and-send`)).body as { state: unknown };
    expect(JSON.parse((await page.textContent('#agent-state')) ?? '{}')).toEqual(stored.state);
    // A reload in the tab: the same transcript, timelines included, and the same pick.
    const before = await page.innerText('#transcript');
    await page.reload();
    await page.waitForSelector('#connection[data-state="live"]');
    expect(await page.inputValue('#agent')).toBe('draft-and-send');
    expect(await page.innerText('#transcript')).toBe(before);
  });

  it('a step answered in another tab leaves this one; a step no longer waiting is refused on its card, which goes', async () => {
    const { page, resourceId, threadId } = await openPage(uid('page-user'), undefined, '&agent=draft-and-send');
    await send(page, 'tea');
    await page.waitForSelector('#approvals form.resume');
    const interruptId = await page.getAttribute('#approvals form.resume', 'data-interrupt-id');
    // Another tab answers: the resumed run reaches this one, whose card goes.
    const other = await fetch(`${server.url}/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        threadId,
        runId: uid('run'),
        messages: [],
        tools: [],
        context: [],
        state: {},
        forwardedProps: { agentId: 'draft-and-send', resourceId },
        resume: [{ interruptId, status: 'resolved', payload: { approved: false } }],
      }),
    });
    expect(other.status).toBe(200);
    await other.text();
    await waitForBubble(page, 'assistant', 'Discarded.');
    await idle(page);
    expect(await page.$$('#approvals form.resume')).toHaveLength(0);

    // Cancelled elsewhere (no run comes of that): the page's answer is refused, said, and the card goes.
    await send(page, 'coffee');
    await page.waitForSelector('#approvals form.resume');
    expect((await http(`${server.url}/threads/${threadId}/abort`, { body: { agentId: 'draft-and-send', resourceId } })).body).toEqual({ aborted: true });
    await page.click('#approvals form.resume button:has-text("Approve")');
    await page.waitForFunction(() => /^Could not answer the step: .*RUN_NOT_FOUND/.test(document.querySelector('#composer-status')?.textContent ?? ''));
    // Seen where the step was answered: beside the composer, inside the window (not at the sidebar's foot).
    expect(
      await page.$eval('#composer-status', (line) => {
        const box = line.getBoundingClientRect();
        return box.height > 0 && box.top >= 0 && box.bottom <= window.innerHeight;
      }),
    ).toBe(true);
    expect(await page.$$('#approvals form.resume')).toHaveLength(0);
  });

  it('a new tab shows the step still waiting (from the thread’s snapshot), and answers it', async () => {
    const { page, resourceId } = await openPage(uid('page-user'), undefined, '&agent=draft-and-send');
    await send(page, 'tea');
    await page.waitForSelector('#approvals form.resume');
    await context?.close();
    const { page: fresh } = await openPage(resourceId, undefined, '&agent=draft-and-send');
    await fresh.waitForSelector('#approvals form.resume');
    expect(await fresh.textContent('#approvals form.resume .resume-payload')).toBe('draft: Draft about tea.');
    await fresh.click('#approvals form.resume button:has-text("Decline")');
    await waitForBubble(fresh, 'assistant', 'Discarded.');
    expect(await fresh.$$('#approvals form.resume')).toHaveLength(0);
  });

  it('an agent that runs the workflow as a tool (draft tea): its steps on the activity card, the review answered from the form', async () => {
    const { page } = await openPage();
    await send(page, 'draft tea');
    await page.waitForSelector('#approvals form.resume');
    const activity = page.locator('#transcript .item[data-activity="workflow"]');
    expect(await activity.locator('.title').textContent()).toBe('Workflow · draft-and-send');
    expect(
      await activity.locator('.step').evaluateAll((nodes) => nodes.map((n) => [n.querySelector('.step-name')?.textContent, (n as HTMLElement).dataset.status])),
    ).toEqual([
      ['draft', 'done'],
      ['review', 'waiting'],
    ]);
    expect(await page.textContent('#approvals form.resume .resume-payload')).toBe('draft: Draft about tea.');
    await page.click('#approvals form.resume button:has-text("Approve")');
    await waitForBubble(page, 'assistant', 'Done: Sent: Draft about tea.');
    await idle(page);
    expect(await activity.locator('.step').evaluateAll((nodes) => nodes.map((n) => (n as HTMLElement).dataset.status))).toEqual(['done', 'done', 'done']);
  });
  it('names a workflow thread after its first input, and the name reaches another tab on the thread', async () => {
    const { page, resourceId, threadId } = await openPage(uid('page-user'), undefined, '&agent=draft-and-send');
    // A second tab of this browser on the same thread (the resource's only one).
    const other = await context!.newPage();
    await other.goto(`${proxy.origin}/?resource=${encodeURIComponent(resourceId)}&agent=draft-and-send`);
    await other.waitForSelector('#connection[data-state="live"]');
    expect(await other.evaluate(() => (window as unknown as PageWindow).bridgeDemo.threadId)).toBe(threadId);
    expect(await other.textContent('#thread-title')).toBe('New chat');
    await send(page, 'tea');
    await page.waitForFunction(() => document.querySelector('#thread-title')?.textContent === 'tea');
    await other.waitForFunction(
      () =>
        document.querySelector('#thread-title')?.textContent === 'tea' &&
        document.querySelector('#threads .thread[aria-pressed="true"] .thread-title')?.textContent === 'tea',
    );
  });

  it('a status line goes when what it says is over: a run that ended (also waiting for an approval), a thread no longer new', async () => {
    const { page } = await openPage();
    const line = (selector: string) => page.waitForFunction((s) => document.querySelector(s)?.textContent, selector).then((h) => h.jsonValue());
    const cleared = (selector: string) => page.waitForFunction((s) => document.querySelector(s)?.textContent === '', selector, { timeout: 10_000 });
    await send(page, 'hello there');
    await cleared('#composer-status');
    await send(page, 'Please delete report.pdf');
    await page.waitForSelector('#approvals .approval');
    await cleared('#composer-status');
    await page.click('#new-thread');
    expect(await line('#action-status')).toBe('New thread created.');
    await send(page, 'hello again');
    await cleared('#action-status');
  });

  it('an approval or a step answered with the keyboard leaves the focus on the composer', async () => {
    const { page } = await openPage();
    await send(page, 'Please delete report.pdf');
    await page.focus('#approvals .approval button:has-text("Approve")');
    await page.keyboard.press('Enter');
    await waitForBubble(page, 'assistant', 'Deleted as requested', 'prefix');
    await page.waitForFunction(() => document.activeElement?.id === 'message');

    await send(page, 'draft tea');
    await page.waitForSelector('#approvals form.resume');
    await page.focus('#approvals form.resume button:has-text("Approve")');
    await page.keyboard.press('Enter');
    await waitForBubble(page, 'assistant', 'Done: Sent: Draft about tea.');
    await page.waitForFunction(() => document.activeElement?.id === 'message');
  });

  it('a long draft scrolls inside its card: the transcript keeps its room at 1280 px, the composer stays in view at 390 px', async () => {
    for (const [viewport, transcriptAtLeast] of [
      [{ width: 1280, height: 900 }, 200],
      [{ width: 390, height: 844 }, 100],
    ] as const) {
      const { page } = await openPage(uid('page-user'), viewport, '&agent=draft-and-send');
      await send(page, longMessage(400));
      await page.waitForSelector('#approvals form.resume');
      const layout = await page.evaluate(() => {
        const box = (selector: string) => document.querySelector(selector)!.getBoundingClientRect();
        const text = document.querySelector<HTMLElement>('#approvals .approval-text')!;
        return {
          cards: box('#approvals').height,
          transcript: box('#transcript').height,
          composerBottom: box('#composer').bottom,
          height: window.innerHeight,
          textScrolls: text.scrollHeight > text.clientHeight,
          textFocusable: text.tabIndex === 0,
        };
      });
      expect(layout.cards, `${viewport.width} px`).toBeLessThanOrEqual(layout.height * 0.45 + 1);
      expect(layout.transcript, `${viewport.width} px`).toBeGreaterThanOrEqual(transcriptAtLeast);
      expect(layout.composerBottom, `${viewport.width} px`).toBeLessThanOrEqual(layout.height);
      expect([layout.textScrolls, layout.textFocusable]).toEqual([true, true]);
      // The buttons are in view without scrolling the card; the card that scrolls breaks no axe rule.
      expect(await page.isVisible('#approvals form.resume button:has-text("Approve")')).toBe(true);
      expect(await axeViolations(page), `${viewport.width} px`).toEqual([]);
      await context?.close();
      context = undefined;
    }
  });
});

describe.skipIf(!hasChromium)('the demo page on a server that requires a token', () => {
  const SECRET = 'a-browser-test-secret-of-at-least-32-bytes';
  const s = useStandaloneServer({ AUTH_JWT_SECRET: SECRET });
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(() => browser?.close());

  const tokenFor = (sub: string) =>
    new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(sub).setExpirationTime('1h').sign(new TextEncoder().encode(SECRET));

  it('asks for a token, says when one is refused, then works as the token’s subject; the token outlives a reload in the tab', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(error.message));
      await page.goto(`${s.origin}/`);
      await page.waitForSelector('#token-form:not([hidden])');
      expect(await page.textContent('#token-status')).toMatch(/requires an access token/);
      // Signed out: the page says so (not "connecting" forever), says how to get a token, and waits for one.
      expect(await page.getAttribute('#connection', 'data-state')).toBe('signed out');
      expect(await page.textContent('#token-form')).toContain('npm start -- token --sub');
      expect(await page.isDisabled('#message')).toBe(true);
      expect(await page.isDisabled('#send')).toBe(true);

      await page.fill('#token', 'not-a-valid-token');
      await page.click('#token-form button[type="submit"]');
      await page.waitForFunction(() => /The token was refused/.test(document.querySelector('#token-status')?.textContent ?? ''));
      // Said in the form, where the token was typed, and seen there.
      expect(await page.isVisible('#token-status')).toBe(true);
      expect(await page.isVisible('#token-form')).toBe(true);

      const subject = uid('token-user');
      await page.fill('#token', await tokenFor(subject));
      await page.click('#token-form button[type="submit"]');
      await page.waitForSelector('#connection[data-state="live"]');
      expect(await page.isHidden('#token-form')).toBe(true);
      expect(await page.inputValue('#resource')).toBe(subject);
      // The token names the resource: another one would be refused, so the box is not editable.
      expect(await page.getAttribute('#resource', 'readonly')).not.toBeNull();
      expect(await page.isDisabled('#resource-form button')).toBe(true);
      expect(await page.isDisabled('#message')).toBe(false);
      await page.waitForFunction((who) => document.querySelector('#action-status')?.textContent === `Signed in as ${who}.`, subject);
      await page.fill('#message', 'hello with a token');
      await page.click('#send');
      await page.waitForFunction(() =>
        [...document.querySelectorAll('#transcript .item.assistant .bubble')].some((n) => n.textContent === 'Echo: hello with a token'),
      );

      await page.reload();
      await page.waitForSelector('#connection[data-state="live"]');
      expect(await page.isHidden('#token-form')).toBe(true);
      expect(await page.getAttribute('#resource', 'readonly')).not.toBeNull();
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
