import type { Container } from 'inversify';
import { AgentProvider } from './agents/agent-provider.js';
import type { ResolvedConfig } from './config.js';
import { ThreadHub } from './feed/thread-hub.js';
import { Limits } from './limits/limits.js';
import { InboxRecovery } from './signals/inbox-recovery.js';
import { StreamingRuns } from './threads/streaming-runs.js';
import type { ThreadControl } from './threads/thread-control.js';
import { TOKENS } from './tokens.js';
import { errorMessage } from './text.js';
import { WebhookSender } from './webhooks/webhook-sender.js';

/** How often a drain looks whether the runs in flight have ended. */
const DRAIN_POLL_MS = 100;

/** Resolves once `done()` holds, or at `deadline` (ms since the epoch); answers `done()`. Mastra tells no event when a run ends. */
async function until(done: () => boolean | Promise<boolean>, deadline: number, pollMs: number): Promise<boolean> {
  while (!(await done()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, pollMs));
  return done();
}

/**
 * What the bridge runs for one Mastra instance beside its routes, from start to shutdown: the
 * inbox's sweep, the webhook sender and the thread control started; recovery at start-up; the
 * runs in flight watched by a drain; everything ended by a shutdown. `Bridge` calls it for each
 * Mastra instance it serves; handlers never see it.
 */
export interface Lifecycle {
  /** Starts the inbox's sweep, the webhook sender (with `config.webhooks`) and the thread control. */
  start(): void;
  /** Answers what a crash left acknowledged and unanswered (`InboxRecovery.recover`); how many. */
  recover(): Promise<number>;
  /** Whether no run is in flight (a run waiting on a person is not: it survives the restart). */
  idle(): Promise<boolean>;
  /** Ends every run within `windDownMs`: each `/run` writes its cancelled end, the threads' runs end cancelled, then the event streams. */
  shutdown(windDownMs: number): Promise<void>;
  /** Threads followed right now (one Mastra subscription each). */
  readonly subscriptionCount: number;
}

/** The lifecycle of the services `container` holds. */
export function lifecycleOf(container: Container, config: ResolvedConfig): Lifecycle {
  const recovery = container.get(InboxRecovery);
  const webhooks = config.webhooks ? container.get(WebhookSender) : undefined;
  const hub = container.get(ThreadHub);
  const streams = container.get(StreamingRuns);
  const [limits, agents] = [container.get(Limits), container.get(AgentProvider)];
  return {
    start: () => {
      recovery.start();
      webhooks?.start();
      void container
        .get<ThreadControl>(TOKENS.ThreadControl)
        .start?.()
        .catch((error: unknown) => config.logger.error(`Thread control failed to start: ${errorMessage(error)}`));
    },
    recover: () => recovery.recover(),
    // A `/run` counts from its run slot until its stream ends (before the slot, the bridge's gate counts it).
    idle: async () => limits.runsInProgress === 0 && (await agents.runsInFlight()) === 0,
    shutdown: async (windDownMs) => {
      const deadline = Date.now() + windDownMs;
      recovery.stop();
      webhooks?.stop();
      streams.shutdown();
      await hub.shutdown(windDownMs);
      await until(() => streams.inFlight === 0, deadline, 5);
    },
    get subscriptionCount() {
      return hub.subscriptionCount;
    },
  };
}

/**
 * Resolves once every lifecycle is idle and `answered()` holds (no request let in before the drain
 * is still on its way to a run slot), or after `graceMs`; answers whether both held (a glance every
 * 100 ms costs nothing here).
 */
export async function drained(lifecycles: () => readonly Lifecycle[], graceMs: number, answered: () => boolean): Promise<boolean> {
  const idle = async () => answered() && (await Promise.all(lifecycles().map((l) => l.idle()))).every(Boolean);
  return until(idle, Date.now() + graceMs, DRAIN_POLL_MS);
}
