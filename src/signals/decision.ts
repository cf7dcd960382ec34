import { BridgeError } from '../errors.js';

/** Mastra's routing decision, as the signal routes answer it. */
export interface SignalDecision {
  action: 'wake' | 'deliver' | 'persist' | 'discard' | 'blocked';
  runId?: string;
  signalId: string;
}

/** What the bridge reads of the output of a run a signal woke (Mastra streams the run itself). */
export interface WokenOutput {
  readonly status: string;
  /** Mastra's own wait for the output's end (internal, but what Mastra uses): it reads nothing. */
  _waitUntilFinished?(): Promise<void>;
}

/** A run a signal woke, for whoever watches it (metrics). */
export type OnWake = (run: { runId: string; output: WokenOutput }) => void;

/** What Mastra's signal methods return. */
export type Sent = { accepted: Promise<{ action: SignalDecision['action']; runId?: string; output?: WokenOutput }>; signal: { id: string } };

/** Mastra's routing decision for a sent signal, as the routes answer it; `onWake` hears of a run it woke. */
export async function decision(sent: Sent, onWake?: OnWake): Promise<SignalDecision> {
  let accepted: Awaited<Sent['accepted']>;
  try {
    accepted = await sent.accepted;
  } catch (error) {
    throw new BridgeError(409, 'CONFLICT', `Mastra refused the signal: ${(error as Error).message}`);
  }
  if (onWake && accepted.action === 'wake' && accepted.runId && accepted.output) onWake({ runId: accepted.runId, output: accepted.output });
  return { action: accepted.action, ...('runId' in accepted && accepted.runId && { runId: accepted.runId }), signalId: sent.signal.id };
}
