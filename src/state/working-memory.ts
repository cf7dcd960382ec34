import type { MastraMemory } from '@mastra/core/memory';
import fastJsonPatch from 'fast-json-patch';
import { invalidInput } from '../errors.js';
import { jsonObjectOf } from '../text.js';
import {
  check,
  readWorkingMemory,
  threadWorkingMemory,
  workingMemoryConfig,
  writeWorkingMemory,
  type StorageThreadType,
  type ThreadTarget,
} from '../mastra/index.js';

/** An agent's state as AG-UI carries it: a JSON object. */
export type AgentState = Record<string, unknown>;

/** Each memory's working memory, resolved on first use (`undefined`: it keeps none). */
const resolved = new WeakMap<MastraMemory, WorkingMemoryState | undefined>();

/** Template-based (Markdown) working memory travels as this one key. */
const MARKDOWN_KEY = 'workingMemory';

/**
 * An agent's working memory seen as AG-UI state: schema-based working memory is the JSON object
 * itself, template-based is `{ workingMemory: "<markdown>" }`. Resolved once per memory (`of`),
 * which answers `undefined` for a memory without working memory; `read` costs one storage call
 * (none from a thread's row already read), `write` two.
 *
 * @example
 * const state = WorkingMemoryState.of(await memoryOf(agent));
 * await state?.read({ threadId, resourceId }); // { facts: ['tea, no sugar'] }
 */
export class WorkingMemoryState {
  private constructor(
    private readonly memory: MastraMemory,
    private readonly format: 'json' | 'markdown',
    private readonly schema: unknown,
    /** Resource-scoped working memory is shared by every thread of the resource. */
    readonly scope: 'thread' | 'resource',
  ) {}

  /** The memory's working memory as state (resolved once per memory, then remembered), or `undefined` without one. */
  static of(memory: MastraMemory | undefined | null): WorkingMemoryState | undefined {
    if (!memory) return undefined;
    if (!resolved.has(memory)) resolved.set(memory, WorkingMemoryState.resolve(memory));
    return resolved.get(memory);
  }

  private static resolve(memory: MastraMemory): WorkingMemoryState | undefined {
    const config = workingMemoryConfig(memory);
    if (!config) return undefined;
    return new WorkingMemoryState(memory, config.schema ? 'json' : 'markdown', config.schema, config.scope);
  }

  /**
   * The stored state; `undefined` when nothing is stored yet (or it is not a JSON object). `row`:
   * the thread's row as the caller read it, which holds thread-scoped working memory (no read then).
   */
  async read(scope: ThreadTarget, row?: StorageThreadType): Promise<AgentState | undefined> {
    const raw = row && this.scope === 'thread' ? threadWorkingMemory(row) : await readWorkingMemory(this.memory, scope);
    if (!raw) return undefined;
    if (this.format === 'markdown') return { [MARKDOWN_KEY]: raw };
    return jsonObjectOf(raw);
  }

  /**
   * Replaces the stored state with a client's (`RunAgentInput.state`), after checking it against
   * the working-memory schema: a state that does not fit is `400 INVALID_INPUT` naming the field
   * (`state.facts`). What is stored is what the schema answers, not what was sent: a zod object
   * drops keys it does not name (`__proto__` and `constructor` among them), and its defaults and
   * transforms apply. Answers whether anything changed: `{}`, and a state whose checked value is
   * the stored state, change nothing. The one place the bridge writes working memory. `row`: as
   * `read`'s.
   */
  async write(scope: ThreadTarget, state: AgentState, row?: StorageThreadType): Promise<boolean> {
    if (Object.keys(state).length === 0) return false;
    const checked = await this.check(state);
    const stored = await this.read(scope, row);
    if (stored && fastJsonPatch.compare(stored, checked.state).length === 0) return false;
    await writeWorkingMemory(this.memory, scope, checked.text);
    return true;
  }

  /** Refuses, as `write` would (`400 INVALID_INPUT`), a state that does not fit: for a request's checks, before anything is written. */
  async assertFits(state: AgentState): Promise<void> {
    if (Object.keys(state).length > 0) await this.check(state);
  }

  /** The state as it is to be stored (checked against the schema, its value kept), and its stored text. */
  private async check(state: AgentState): Promise<{ state: AgentState; text: string }> {
    if (this.format === 'markdown') {
      const text = state[MARKDOWN_KEY];
      if (typeof text !== 'string' || Object.keys(state).length !== 1) {
        throw invalidInput('This agent keeps its state as Markdown: state must be { "workingMemory": "<markdown>" }', [
          { path: 'state', message: 'Expected { workingMemory: string }' },
        ]);
      }
      return { state: { [MARKDOWN_KEY]: text }, text };
    }
    const checked = await check(this.schema, state);
    if (!checked.ok) {
      const details = checked.issues.map(({ path, message }) => ({ path: path ? `state.${path}` : 'state', message }));
      throw invalidInput("The state does not fit the agent's working-memory schema", details);
    }
    const value = checked.value;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw invalidInput("The agent's working-memory schema does not answer a JSON object for this state", [
        { path: 'state', message: 'Expected the schema to answer an object' },
      ]);
    }
    // Stored as the JSON of the checked value; read back, it is what every state event carries.
    const text = JSON.stringify(value);
    return { state: JSON.parse(text) as AgentState, text };
  }
}
