// @ts-check
/**
 * The Schedules panel: the open thread's schedules (docs/schedules.md), made from a preset or a
 * cron of one's own in a time zone (the browser's by default), listed with their next and last
 * fire, paused, resumed, run now and deleted. A fire is a run on the thread: the transcript shows
 * it as the signal it is, and the list is read again when a run ends.
 */

import { textFields } from './form-fields.js';

/** The browser's time zone, first in the picker. */
const HERE = Intl.DateTimeFormat().resolvedOptions().timeZone;

/**
 * @param {{ form: HTMLFormElement, when: HTMLSelectElement, cronRow: HTMLElement, cron: HTMLInputElement, timezone: HTMLSelectElement, list: HTMLElement }} ui
 * @param {{ client: () => import('./client.js').BridgeClient, threadId: () => string | undefined, attempt: (failure: string, action: () => Promise<unknown>) => Promise<unknown>, say: (text: string, tone?: import('./page-types').Tone) => void }} page
 */
export function schedulesPanel(ui, page) {
  const zones = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [HERE];
  ui.timezone.replaceChildren(...[HERE, ...zones.filter((z) => z !== HERE)].map((zone) => new Option(zone, zone)));
  ui.when.addEventListener('change', () => {
    ui.cronRow.hidden = ui.when.value !== 'custom';
    ui.cron.required = !ui.cronRow.hidden;
  });

  /** Makes the schedule the form describes, on the open thread. */
  async function create() {
    const threadId = page.threadId();
    if (!threadId) return;
    const text = textFields(ui.form);
    const cron = ui.when.value === 'custom' ? text('cron').trim() : ui.when.value;
    await page.attempt('Could not create the schedule', async () => {
      await page.client().createSchedule(threadId, { cron, timezone: text('timezone'), prompt: text('prompt') });
      page.say('Schedule created.', 'ok');
      await refresh();
    });
  }
  ui.form.addEventListener('submit', (event) => {
    event.preventDefault();
    void create();
  });

  /** Pauses, resumes, runs or deletes the schedule whose button was clicked. */
  async function act(/** @type {MouseEvent} */ event) {
    const button = /** @type {HTMLElement} */ (event.target).closest('button[data-action]');
    const item = button?.closest('li[data-id]');
    if (!button || !(item instanceof HTMLElement)) return;
    const id = /** @type {string} */ (item.dataset.id);
    const action = /** @type {string} */ (button.getAttribute('data-action'));
    const client = page.client();
    const steps = {
      pause: () => client.setSchedule(id, 'pause'),
      resume: () => client.setSchedule(id, 'resume'),
      run: () => client.runSchedule(id),
      delete: () => client.deleteSchedule(id),
    };
    await page.attempt(`Could not ${action === 'run' ? 'run' : action} the schedule`, async () => {
      await steps[/** @type {keyof typeof steps} */ (action)]();
      page.say(action === 'run' ? 'Schedule fired: the agent is answering it.' : `Schedule ${action === 'delete' ? 'deleted' : `${action}d`}.`, 'ok');
      await refresh();
    });
  }
  ui.list.addEventListener('click', (event) => void act(event));

  /** Reads the open thread's schedules and their latest fires again. */
  async function refresh() {
    const threadId = page.threadId();
    if (!threadId) return ui.list.replaceChildren();
    const client = page.client();
    const schedules = await client.threadSchedules(threadId).catch(() => []);
    const lasts = await Promise.all(schedules.map((s) => client.scheduleTriggers(s.id, { limit: 1 }).catch(() => [])));
    if (threadId !== page.threadId()) return;
    ui.list.replaceChildren(...(schedules.length ? schedules.map((s, i) => scheduleItem(s, lasts[i][0])) : [emptyItem()]));
  }

  return { refresh };
}

/** @param {string | undefined} iso */
const when = (iso) => (iso ? new Date(iso).toLocaleString() : '');

/**
 * One schedule: what it says, when it fires, and its buttons.
 *
 * @param {import('./client.js').Schedule} schedule
 * @param {import('./client.js').ScheduleTrigger | undefined} last its latest fire
 */
function scheduleItem(schedule, last) {
  const item = document.createElement('li');
  item.className = 'schedule';
  item.dataset.id = schedule.id;
  item.dataset.status = schedule.status;
  const what = document.createElement('p');
  const prompt = document.createElement('strong');
  prompt.textContent = schedule.prompt;
  const timing = document.createElement('span');
  timing.className = 'muted';
  timing.textContent = ` ${schedule.cron} · ${schedule.timezone ?? 'server time'}${schedule.status === 'paused' ? ' · paused' : ''}`;
  what.append(prompt, timing);
  const fires = document.createElement('p');
  fires.className = 'muted schedule-fires';
  fires.textContent = `Next: ${schedule.status === 'paused' ? 'paused' : when(schedule.nextFireAt)}${last ? ` · Last: ${when(last.firedAt)} (${last.outcome})` : ''}`;
  const actions = document.createElement('div');
  actions.className = 'schedule-actions';
  const pausing = schedule.status === 'paused' ? ['resume', 'Resume'] : ['pause', 'Pause'];
  for (const [action, label] of [pausing, ['run', 'Run now'], ['delete', 'Delete']]) {
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'secondary';
    button.dataset.action = action;
    button.textContent = label;
    button.setAttribute('aria-label', `${label}: ${schedule.prompt}`);
    actions.append(button);
  }
  item.append(what, fires, actions);
  return item;
}

function emptyItem() {
  const item = document.createElement('li');
  item.className = 'muted';
  item.textContent = 'No schedule on this thread.';
  return item;
}
