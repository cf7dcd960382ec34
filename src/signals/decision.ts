import { BridgeError } from '../errors.js';

/** Mastra's routing decision, as the signal routes answer it. */
export interface SignalDecision {
  action: 'wake' | 'deliver' | 'persist' | 'discard' | 'blocked';
  runId?: string;
  signalId: string;
}

/** What Mastra's signal methods return. */
export type Sent = { accepted: Promise<{ action: SignalDecision['action']; runId?: string }>; signal: { id: string } };

/** Mastra's routing decision for a sent signal, as the routes answer it. */
export async function decision(sent: Sent): Promise<SignalDecision> {
  let accepted: Awaited<Sent['accepted']>;
  try {
    accepted = await sent.accepted;
  } catch (error) {
    throw new BridgeError(409, 'CONFLICT', `Mastra refused the signal: ${(error as Error).message}`);
  }
  return { action: accepted.action, ...('runId' in accepted && accepted.runId && { runId: accepted.runId }), signalId: sent.signal.id };
}
