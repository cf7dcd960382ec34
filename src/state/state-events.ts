import { EventType, type Event, type JsonPatch } from '@ag-ui/core';
import fastJsonPatch from 'fast-json-patch';
import { WORKING_MEMORY_TOOL, type MastraChunk } from '../translate/chunks.js';
import type { AgentState } from './working-memory.js';

/** Whether a chunk is the result of a working-memory update: the stored state may have changed. */
export function updatesWorkingMemory(chunk: MastraChunk): boolean {
  return chunk.type === 'tool-result' && (chunk.payload as { toolName?: unknown }).toolName === WORKING_MEMORY_TOOL;
}

/**
 * The state events of one stream (a `/run`, or a thread's feed): `STATE_SNAPSHOT` right after each
 * `RUN_STARTED` when the thread has state, and after each working-memory update the change as a
 * `STATE_DELTA` (RFC 6902, against what this stream's state events built so far), or a snapshot
 * when the stream has sent none yet, so that a delta always has a base. `read` loads the stored
 * state; it is only called at a run's start and after an update, never per chunk.
 */
export class StateEvents {
  /** The state the stream's clients hold: what its state events built. */
  private sent: AgentState | undefined;

  constructor(private readonly read: () => Promise<AgentState | undefined>) {}

  /** Whether state events go with a chunk's translated events (a run starts, or the working memory was updated). */
  concerns(chunk: MastraChunk, events: readonly Event[]): boolean {
    return updatesWorkingMemory(chunk) || events.some((e) => e.type === EventType.RUN_STARTED);
  }

  /** A chunk's translated events with the state events that go with them, in place. */
  async around(chunk: MastraChunk, events: Event[]): Promise<Event[]> {
    const started = events.findIndex((e) => e.type === EventType.RUN_STARTED);
    if (started >= 0) events.splice(started + 1, 0, ...(await this.opening()));
    if (updatesWorkingMemory(chunk)) events.push(...(await this.changed()));
    return events;
  }

  /** What follows a `RUN_STARTED`: the thread's state, if it has one. */
  async opening(): Promise<Event[]> {
    const state = await this.read();
    // A bracket starts the stream's state afresh: a client may have joined at this RUN_STARTED.
    this.sent = state;
    return state === undefined ? [] : [{ type: EventType.STATE_SNAPSHOT, snapshot: state }];
  }

  /** The stored state moved (or not) since the stream last said: a delta, a first snapshot, or nothing. */
  async changed(): Promise<Event[]> {
    const state = await this.read();
    if (state === undefined) return [];
    const before = this.sent;
    this.sent = state;
    if (before === undefined) return [{ type: EventType.STATE_SNAPSHOT, snapshot: state }];
    // `compare` makes only add, remove and replace operations (its type admits its internal `_get` too).
    const delta = fastJsonPatch.compare(before, state) as JsonPatch;
    return delta.length > 0 ? [{ type: EventType.STATE_DELTA, delta }] : [];
  }
}
