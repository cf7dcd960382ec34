import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDemoWorkflow, DEMO_WORKFLOW_ID } from '../src/demo/workflow.js';
import { runInput, runStrict, uid, userMessage } from './support/agui.js';
import { axeViolations, CHROMIUM_PATH, hasChromium, launchChromium } from './support/browser.js';
import { installExample, type CopilotKitServerModule } from './support/examples.js';
import { npm } from './support/package.js';
import { http, useTestBridge } from './support/server.js';

// examples/copilotkit's React app (CopilotKit v2's chat, `useAgent` for the shared state,
// `useInterrupt` for approvals), built with Vite and served by the example's runtime in front of a
// real bridge, driven in real chromium as a person would: type, press Enter, click.

/** Screenshots for a person to look at (gitignored). */
const ARTIFACTS = join(import.meta.dirname, 'artifacts');

describe.skipIf(!hasChromium)(`examples/copilotkit's React app in chromium${hasChromium ? '' : ` (skipped: ${CHROMIUM_PATH} is missing)`}`, () => {
  const bridge = useTestBridge({ delayMs: 0, workflows: () => ({ [DEMO_WORKFLOW_ID]: createDemoWorkflow() }) });
  let runtime: Server;
  let origin: string;
  let browser: Browser;
  let built: string;

  beforeAll(async () => {
    const dir = await installExample('copilotkit');
    // A build of its own, so that a build in the example's dist/ (or another test run's) is left alone.
    built = mkdtempSync(join(tmpdir(), 'copilotkit-app-'));
    await npm(dir, ['run', 'build', '--', '--outDir', built, '--logLevel', 'warn']);
    process.env.COPILOTKIT_TELEMETRY_DISABLED = 'true'; // keep the runtime off the network
    const server: CopilotKitServerModule = await import(join(dir, 'server.ts'));
    runtime = await server.listen(bridge.base, 0, '127.0.0.1', { staticDir: built });
    origin = `http://127.0.0.1:${(runtime.address() as AddressInfo).port}`;
    browser = await launchChromium();
    mkdirSync(ARTIFACTS, { recursive: true });
  }, 600_000); // a first run installs the example (about a minute here; more on a cold npm cache)

  afterAll(async () => {
    await browser?.close();
    runtime?.closeAllConnections();
    await new Promise((resolve) => (runtime ? runtime.close(resolve) : resolve(undefined)));
    if (built) rmSync(built, { recursive: true, force: true });
  });

  /**
   * A fresh tab on the app (a fresh CopilotKit thread, unless `query` names one); fails the test on
   * any page error. `prepare` runs on the tab before it loads the app.
   */
  async function openApp(
    viewport = { width: 1280, height: 900 },
    colorScheme: 'light' | 'dark' = 'light',
    query = '',
    prepare?: (page: Page) => Promise<void>,
  ): Promise<{ page: Page; errors: string[] }> {
    const page = await browser.newPage({ viewport, colorScheme });
    const errors: string[] = [];
    page.on('pageerror', (error) => void errors.push(error.message));
    page.on('console', (message) => void (message.type() === 'error' && errors.push(message.text())));
    await prepare?.(page);
    await page.goto(`${origin}/${query}`);
    return { page, errors };
  }

  /** Types into CopilotKit's chat input and presses Enter, as a person sends a message. */
  async function say(page: Page, text: string): Promise<void> {
    const input = page.getByRole('textbox');
    await input.fill(text);
    await input.press('Enter');
  }

  /**
   * The demo workflow's review card (its step suspended, whether the agent runs the workflow or it
   * was picked): the draft shown on it, the edit typed in (if any), approved; then the answer, and
   * the card gone with the interrupt.
   */
  async function approveDraft(page: Page, { edit, answer }: { edit?: string; answer: string }): Promise<void> {
    const card = page.getByRole('region', { name: `${DEMO_WORKFLOW_ID} waits for you` });
    await card.waitFor();
    expect(await card.locator('dd').innerText()).toBe('Draft about tea.');
    if (edit) await card.getByLabel('edit (optional)').fill(edit);
    await card.getByRole('button', { name: 'Approve' }).click();
    await page.getByText(answer).waitFor();
    await card.waitFor({ state: 'detached' });
  }

  /** The agent's thread as the bridge stores it: the one this tab's CopilotKit agent ran on. */
  async function storedThread(): Promise<string> {
    const threads = await http(`${bridge.base}/threads?resourceId=default`);
    const [latest] = threads.body as Array<{ id: string }>; // newest first
    return latest.id;
  }

  it('serves the built app beside the runtime, and nothing outside it', async () => {
    const page = await fetch(`${origin}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await page.text()).toContain('<div id="root"></div>');
    for (const path of ['/%2e%2e/server.ts', '/..%2fserver.ts', '/%E0%A4%A', '/no-such-file.js']) {
      const answer = await fetch(`${origin}${path}`);
      expect(answer.status, path).toBe(404);
    }
    expect((await fetch(`${origin}/`)).status).toBe(200); // still serving
  });

  it('chats: a message typed in CopilotKit’s input is answered by the bridge’s agent', async () => {
    const { page, errors } = await openApp();
    await say(page, 'hello from the React app');
    await page.getByText('Echo: hello from the React app').waitFor();
    expect(errors).toEqual([]);
    await page.close();
  });

  it('offers its input once the runtime has answered: a message typed as soon as it shows reaches the agent, its state beside the chat', async () => {
    // The runtime's first answer (which agents it serves) held back, as on a slow connection.
    let answer = () => {};
    const held = new Promise<void>((resolve) => (answer = resolve));
    const { page, errors } = await openApp(undefined, undefined, '', async (tab) => {
      await tab.route('**/api/copilotkit', async (route) => {
        if (route.request().postData()?.includes('"method":"info"')) await held;
        await route.continue();
      });
    });
    await page.getByText('Connecting to the runtime…').waitFor();
    expect(await page.getByRole('textbox').count()).toBe(0);
    answer();
    await say(page, 'remember tea, no sugar');
    await page.locator('#facts li', { hasText: 'tea, no sugar' }).waitFor();
    await page.getByText('Noted: tea, no sugar').waitFor();
    expect(errors).toEqual([]);
    await page.close();
  });

  it('shows the agent’s shared state: “remember …” adds a fact beside the chat, equal to what the bridge stores', async () => {
    const { page, errors } = await openApp();
    await say(page, 'remember tea, no sugar');
    await page.getByText('Noted: tea, no sugar').waitFor();
    await say(page, 'remember the window seat');
    await page.locator('#facts li', { hasText: 'the window seat' }).waitFor();
    expect(await page.locator('#facts li').allInnerTexts()).toEqual(['tea, no sugar', 'the window seat']);
    const stored = await http(`${bridge.base}/threads/${await storedThread()}/state`);
    expect(stored.body).toEqual({ state: { facts: ['tea, no sugar', 'the window seat'] } });
    expect(errors).toEqual([]);
    await page.close();
  });

  it.each([
    ['Approve', 'Deleted as requested: {"deleted":"notes.txt"}'],
    ['Decline', 'I did not delete the file: Tool call was not approved by the user'],
  ])('an approval in CopilotKit’s interrupt UI: %s resumes the run with that answer', async (button, answer) => {
    const { page, errors } = await openApp();
    await say(page, 'delete notes.txt');
    const card = page.getByRole('region', { name: 'Allow delete_file?' });
    await card.waitFor();
    expect(await card.locator('pre').innerText()).toBe(JSON.stringify({ path: 'notes.txt' }, null, 2));
    const pending = () => http(`${bridge.base}/threads/${threadId}/pending-approvals`).then((r) => r.body);
    const threadId = await storedThread();
    expect(await pending()).toEqual([expect.objectContaining({ toolName: 'delete_file', args: { path: 'notes.txt' } })]);
    await card.getByRole('button', { name: button }).click();
    await page.getByText(answer).waitFor();
    // Answered once, and the card leaves with the interrupt.
    await card.waitFor({ state: 'detached' });
    expect(await pending()).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('a suspended step’s card shows what it waits on (the draft) with a form from its responseSchema: edited, then approved, the edit is sent', async () => {
    const { page, errors } = await openApp();
    await say(page, 'draft tea');
    await approveDraft(page, { edit: 'Tea, edited.', answer: 'Done: Sent: Tea, edited.' });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('picks the workflow from the bridge’s list (GET /agents) and runs it directly: its input’s hint and its state beside the chat, its step approved on its card; the pick stays in the URL', async () => {
    const { page, errors } = await openApp();
    const picker = page.getByLabel('Talk to');
    const listed = (await http(`${bridge.base}/agents`)).body as Array<{ id: string }>;
    await page.waitForFunction((n) => document.querySelectorAll('#agent option').length === n, listed.length);
    expect(await picker.locator('option').evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value))).toEqual(listed.map((a) => a.id));
    expect(await page.getByRole('textbox').getAttribute('placeholder')).toContain('remember tea');
    await picker.selectOption(DEMO_WORKFLOW_ID);
    expect(new URL(page.url()).searchParams.get('agent')).toBe(DEMO_WORKFLOW_ID);
    // What is picked is a workflow: the input asks for its input, the panel shows its state.
    expect(await page.getByRole('textbox').getAttribute('placeholder')).toMatch(/^Input for .+: its text, or a JSON object$/);
    await page.getByRole('heading', { name: 'The workflow’s state' }).waitFor();
    await say(page, 'tea');
    await approveDraft(page, { answer: 'Sent: Draft about tea.' });
    await page.locator('#workflow-state dd').waitFor();
    expect(await page.locator('#workflow-state').innerText()).toMatch(/^drafts\s+1$/);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('a reload keeps the conversation and the shared state: the thread is in the URL, its history and state read from the bridge', async () => {
    const { page, errors } = await openApp();
    await say(page, 'remember tea, no sugar');
    await page.getByText('Noted: tea, no sugar').waitFor();
    await page.locator('#facts li', { hasText: 'tea, no sugar' }).waitFor();
    const threadId = new URL(page.url()).searchParams.get('thread');
    expect(threadId).toBe(await storedThread());
    await page.reload();
    await page.getByText('Noted: tea, no sugar').waitFor();
    await page.getByText('remember tea, no sugar').waitFor();
    await page.locator('#facts li', { hasText: 'tea, no sugar' }).waitFor();
    expect(new URL(page.url()).searchParams.get('thread')).toBe(threadId);
    // The conversation goes on on the same thread.
    await say(page, 'hello again');
    await page.getByText('Echo: hello again').waitFor();
    const stored = (await http(`${bridge.base}/threads/${threadId}/messages?format=agui`)).body as Array<{ role: string; content?: string }>;
    const said = stored.filter((m) => m.role === 'user' || (m.role === 'assistant' && m.content)).map((m) => m.content);
    expect(said).toEqual(['remember tea, no sugar', 'Noted: tea, no sugar', 'hello again', 'Echo: hello again']);
    expect(errors).toEqual([]);
    await page.close();

    // A thread the runtime never carried (run on the bridge directly): opened by its link, shown from the bridge's history.
    const elsewhere = uid('thread');
    await runStrict(`${bridge.base}/run`, runInput({ threadId: elsewhere, messages: [userMessage('remember the window seat')] }));
    const linked = await openApp(undefined, undefined, `?thread=${elsewhere}`);
    await linked.page.getByText('Noted: the window seat').waitFor();
    await linked.page.locator('#facts li', { hasText: 'the window seat' }).waitFor();
    expect(linked.errors).toEqual([]);
    await linked.page.close();
  });

  it('shows a delegation to the researcher sub-agent as a card, then the sub-agent’s answer and the summary', async () => {
    const { page, errors } = await openApp();
    await say(page, 'research bees');
    const card = page.getByRole('region', { name: 'Delegated to the researcher' });
    await card.getByText('Researcher · done').waitFor();
    expect(await card.innerText()).toContain('research bees');
    await page.getByText('Summary: Findings on bees: three sources agree, and none disagrees.').waitFor();
    await page.getByText('Findings on bees: three sources agree, and none disagrees.', { exact: true }).waitFor();
    expect(errors).toEqual([]);
    await page.close();
  });

  it('passes every axe-core rule (best practices included) with an approval card and remembered facts on it, at 1280 and 390 px, light and dark', async () => {
    const looks = [
      [{ width: 1280, height: 900 }, 'light'],
      [{ width: 390, height: 844 }, 'dark'],
    ] as const;
    for (const [viewport, colorScheme] of looks) {
      const { page } = await openApp(viewport, colorScheme);
      await say(page, 'remember tea');
      await page.locator('#facts li', { hasText: 'tea' }).waitFor();
      await say(page, 'delete notes.txt');
      await page.getByRole('region', { name: 'Allow delete_file?' }).waitFor();
      expect(await axeViolations(page), `${viewport.width} px, ${colorScheme}`).toEqual([]);
      await page.screenshot({ path: join(ARTIFACTS, `copilotkit-${viewport.width}-${colorScheme}.png`) });
      await page.close();
    }
  }, 120_000); // two tabs, four runs and two axe passes: beyond the default 30 s on a loaded machine
});
