import type { Agent } from '@mastra/core/agent';
import type { MastraMemory } from '@mastra/core/memory';
import type { StorageThreadType } from '../mastra/index.js';
import { inject, injectable } from 'inversify';
import { AgentProvider } from '../agents/agent-provider.js';
import { RecoveryGate } from '../threads/recovery-gate.js';
import { ThreadStore, type ThreadScope } from '../threads/thread-store.js';

/** The agent of a request and its memory, resolved once per request. */
export interface Resolved {
  agent: Agent;
  memory: MastraMemory;
}

/** The thread's agent and memory, and what the ownership check read of the thread. */
export interface Owned extends Resolved {
  existed: boolean;
  /** The thread's row as claimed (`claim` only). */
  thread?: StorageThreadType;
}

/**
 * The agent a signal route steers, after checking that the thread is not another resource's
 * (`404`, as if it did not exist), and, for what may start a run, after what a crash left
 * unanswered on the thread.
 *
 * @example
 * const { agent } = await ownership.agentOf(scope, 'claim');
 */
@injectable()
export class ThreadOwnership {
  constructor(
    @inject(AgentProvider) private readonly agents: AgentProvider,
    @inject(ThreadStore) private readonly threads: ThreadStore,
    @inject(RecoveryGate) private readonly gate: RecoveryGate,
  ) {}

  /**
   * The agent for the thread, whether the thread `existed` (a new one has no stopped run to
   * supersede), and with `claim` its row: `read` only checks, `claim` creates a missing thread for
   * the caller (a signal may wake a run on it), `existing` also requires that it exists.
   */
  async agentOf(scope: ThreadScope, mode: 'read' | 'claim' | 'existing', given?: Resolved): Promise<Owned> {
    const resolved = given ?? (await this.agents.withMemory(scope.agentId));
    const owned = { ...scope, agentId: resolved.agent.id };
    // What may start a run comes after what a crash left unanswered on the thread.
    if (mode !== 'read') await this.gate.pass(scope.threadId);
    if (mode === 'claim') return { ...resolved, ...(await this.threads.claim(owned, resolved.memory)) };
    if (mode === 'read') return { ...resolved, existed: (await this.threads.assertNotForeign(owned, resolved.memory)).exists };
    await this.threads.load(owned, resolved.memory);
    return { ...resolved, existed: true };
  }
}
