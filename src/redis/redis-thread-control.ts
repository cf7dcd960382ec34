import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { Agent } from '@mastra/core/agent';
import { inject, injectable } from 'inversify';
import { AgentProvider } from '../agents/agent-provider.js';
import type { ResolvedConfig } from '../config.js';
import { BridgeError, unavailable } from '../errors.js';
import type { BridgeLogger } from '../logger.js';
import { TOKENS } from '../tokens.js';
import {
  activeThreadRunId,
  outgoingWithId,
  outputFinished,
  queueMessage,
  sendNow,
  type AgentMessage,
  type OnWake,
  type Outgoing,
  type Routing,
  type RunOutput,
  type SignalDecision,
  type ThreadTarget,
} from '../mastra/index.js';
import { ResultCapture } from '../runs/result-capture.js';
import { resumeHere, type ResumeRequest, type Resumer } from '../runs/resume.js';
import type { RunLive } from '../runs/stream-options.js';
import type { ToolProxy } from '../runs/tool-proxy.js';
import { InProcessThreadControl, APPROVAL_MEMORY_MS, sendPastFinishingRun, type AbortOptions, type ThreadControl } from '../threads/thread-control.js';
import { RunEndings } from '../threads/run-endings.js';
import type { AnsweredCall, CallAnswer } from '../threads/answer-call.js';
import { errorMessage } from '../text.js';
import type { RedisConnection } from './connection.js';
import { inTraceOf, withTraceparent } from '../observability/trace-context.js';
import { RelayedOutput, relayOutput } from './output-relay.js';
import { ThreadHolders } from './thread-holders.js';

type Op = 'abort' | 'stop' | 'send' | 'queue' | 'cancel' | 'answer' | 'resume';
interface Request {
  id: string;
  op: Op;
  agentId: string;
  thread: ThreadTarget;
  message?: AgentMessage;
  outgoing?: Outgoing;
  /** The message's routing (`ifActive`, `ifIdle`); named `options` on the wire. */
  options?: Routing;
  signalIds?: string[];
  answer?: CallAnswer;
  resume?: ResumeRequest;
  relay?: string;
  /** An abort answered once the run wound down. */
  untilEnded?: boolean;
  reason?: string;
  /** The asker's trace: what the holder does for it (a run it wakes or resumes) joins it. */
  traceparent?: string;
  replyTo: string;
}
interface Reply {
  id: string;
  /** The holder has the request and is working on it: the asker must not do it itself. */
  taken?: boolean;
  result?: unknown;
  error?: string;
  /** The holder's error as the routes answer it (a refusal of Mastra's is a `409` here as there). */
  refusal?: { status: BridgeError['status']; code: BridgeError['code'] };
}

/** How long a send waits, at most, for a finishing run of this process to let go: it does so within ~15 ms. */
const LET_GO_MS = 2000;
const LET_GO_POLL_MS = 5;
/** How long a request waits for the process that holds the thread to take it: past it, nobody does. */
const REPLY_TIMEOUT_MS = 2000;
/**
 * How long a taken request waits for its answer: the holder's work is bounded (a send past a
 * finishing run 2 s, an abort's wind-down 5 s), so past this the holder is stuck or gone.
 */
const TAKEN_TIMEOUT_MS = 15_000;

/**
 * Abort, send, queue, cancel-queued, answering a waiting call and resuming one (a `/run`'s
 * `resume`, its output relayed back) across processes on one Redis. Mastra 1.71 does these only for
 * its own process's runs, so every process listens on one control channel and the holder of the
 * thread's lease does it with Mastra's own methods, replying on the asker's channel. A thread no
 * process holds is idle: the asker does it itself (a queued message wakes it). A holder silent on a
 * send or a queue is gone: what it held is recovered first (`ThreadHolders`).
 */
@injectable()
export class RedisThreadControl implements ThreadControl, Resumer {
  private readonly local: InProcessThreadControl;
  private readonly channel: string;
  private readonly replyTo: string;
  private readonly waiting = new Map<string, (reply: Reply) => void>();
  private readonly onRequest = (message: string) => void this.handle(JSON.parse(message) as Request);
  private readonly onReply = (message: string) => {
    const reply = JSON.parse(message) as Reply;
    this.waiting.get(reply.id)?.(reply);
  };

  private readonly logger: BridgeLogger;

  constructor(
    @inject(TOKENS.Redis) private readonly redis: RedisConnection,
    @inject(ThreadHolders) private readonly holders: ThreadHolders,
    @inject(AgentProvider) private readonly agents: Pick<AgentProvider, 'get'>,
    @inject(TOKENS.Config) config: Pick<ResolvedConfig, 'logger'>,
    @inject(RunEndings) private readonly endings: RunEndings,
    @inject(TOKENS.ToolProxy) private readonly proxy: ToolProxy,
  ) {
    this.local = new InProcessThreadControl(endings);
    this.logger = config.logger;
    this.channel = `${redis.prefix}:control`;
    this.replyTo = `${redis.prefix}:control-reply:${randomUUID()}`;
  }

  private ready?: Promise<void>;

  /** Listens for requests and for answers to its own (idempotent; every request waits for it). */
  start(): Promise<void> {
    this.ready ??= (async () => {
      await this.redis.subscriber.subscribe(this.channel, this.onRequest);
      await this.redis.subscriber.subscribe(this.replyTo, this.onReply);
    })();
    return this.ready;
  }

  async stop(): Promise<void> {
    await this.redis.subscriber.unsubscribe(this.channel, this.onRequest);
    await this.redis.subscriber.unsubscribe(this.replyTo, this.onReply);
  }

  async abort(agent: Agent, thread: ThreadTarget, options: AbortOptions = {}): Promise<{ aborted: boolean }> {
    if (this.holds(thread)) return this.local.abort(agent, thread, options);
    return ((await this.ask({ op: 'abort', agentId: agent.id, thread, ...options })) as { aborted: boolean } | undefined) ?? { aborted: false };
  }

  async stopStreamed(thread: ThreadTarget, reason: string): Promise<boolean> {
    if (this.holds(thread)) return this.local.stopStreamed(thread, reason);
    return ((await this.ask({ op: 'stop', agentId: '', thread, reason })) as boolean | undefined) ?? false;
  }

  /**
   * Sent where the thread's run is: Mastra would send it on from here as a hand-off to that run,
   * which it drops if the run ends as it comes. The holder sends it into its own run, past that
   * run's end (`sendPastFinishingRun`); a thread nobody holds is woken from here.
   */
  async send(agent: Agent, thread: ThreadTarget, outgoing: Outgoing, routing: Routing, onWake?: OnWake): Promise<SignalDecision> {
    // Nobody holds the thread (a run that held it was let go of, here or elsewhere): it wakes here.
    if ((await this.holders.owner(thread)) === undefined) return sendNow(agent, outgoing, { ...routing, ...thread }, onWake);
    if (this.holds(thread)) return this.sendHere(agent, thread, outgoing, routing, onWake);
    const remote = (await this.askHolder({ op: 'send', agentId: agent.id, thread, outgoing, options: routing })) as SignalDecision | undefined;
    return remote ?? sendNow(agent, outgoing, { ...routing, ...thread }, onWake);
  }

  /** Into a run of this process: one that is finishing does not take it, and it is sent again. */
  private async sendHere(agent: Agent, thread: ThreadTarget, outgoing: Outgoing, routing: Routing, onWake?: OnWake): Promise<SignalDecision> {
    await this.untilLetGo(agent, thread);
    const takeBack = (id: string) => this.local.cancelQueued(agent, thread, [id]);
    return sendPastFinishingRun(agent, thread, (id) => sendNow(agent, outgoingWithId(outgoing, id), { ...routing, ...thread }, onWake), takeBack);
  }

  async queue(agent: Agent, thread: ThreadTarget, message: AgentMessage, routing: Routing, onWake?: OnWake): Promise<SignalDecision> {
    if (this.holds(thread)) return this.queueHere(agent, thread, message, routing, onWake);
    const remote = (await this.askHolder({ op: 'queue', agentId: agent.id, thread, message, options: routing })) as SignalDecision | undefined;
    return remote ?? queueMessage(agent, message, { ...routing, ...thread }, onWake);
  }

  async cancelQueued(agent: Agent, thread: ThreadTarget, signalIds: string[]): Promise<string[]> {
    if (this.holds(thread)) return this.local.cancelQueued(agent, thread, signalIds);
    const remote = (await this.ask({ op: 'cancel', agentId: agent.id, thread, signalIds })) as string[] | undefined;
    return remote ?? this.local.cancelQueued(agent, thread, signalIds);
  }

  /**
   * Where the call's run stopped: that process's Mastra holds the run (and the thread's lease)
   * until it resumes it there. A run nobody holds any more (its process gone) is resumed here.
   */
  async answerCall(agent: Agent, thread: ThreadTarget, answer: CallAnswer): Promise<AnsweredCall> {
    if (!(await this.heldElsewhere(thread))) return this.local.answerCall(agent, thread, answer);
    const remote = (await this.ask({ op: 'answer', agentId: agent.id, thread, answer })) as AnsweredCall | undefined;
    return remote ?? this.local.answerCall(agent, thread, answer);
  }

  /**
   * Resumed where the run stopped (see `answerCall`): that process resumes it, with options built
   * there, and relays its output on a channel of this request (`relayOutput`), read here as if
   * local (`RelayedOutput`). A cut here goes there as an abort of the thread's run.
   */
  async resume(agent: Agent, thread: ThreadTarget, request: ResumeRequest, live: RunLive): Promise<RunOutput> {
    if (!(await this.heldElsewhere(thread))) return resumeHere(agent, request, live);
    const relay = `${this.redis.prefix}:relay:${randomUUID()}`;
    const unsubscribe = () => this.redis.subscriber.unsubscribe(relay, output.listener);
    const output: RelayedOutput = new RelayedOutput(unsubscribe, () => this.endings.markCut(request.target.runId));
    await this.redis.subscriber.subscribe(relay, output.listener);
    const started = await this.ask({ op: 'resume', agentId: agent.id, thread, resume: request, relay }).catch(async (error: unknown) => {
      await output.close();
      throw error;
    });
    if (started === undefined) {
      await output.close();
      return resumeHere(agent, request, live);
    }
    const cut = () => {
      // Only while the run lasts: once it is over there, the thread's run may be another one.
      if (output.over) return;
      void this.abort(agent, thread).catch((error: unknown) => {
        // The run goes on there, and its end reaches the thread's followers; this reader has stopped.
        this.logger.debug(`Thread ${thread.threadId}: the cut of a run resumed elsewhere did not reach it: ${errorMessage(error)}`);
      });
    };
    live.signal.addEventListener('abort', cut, { once: true });
    return output;
  }

  async taken(toolCallId: string): Promise<boolean> {
    return (await this.redis.client.exists(this.answeredKey(toolCallId))) === 1;
  }

  async asksAgain(toolCallId: string): Promise<void> {
    await this.redis.client.del(this.answeredKey(toolCallId));
  }

  /** The first approval of a call, in any process: a key set only if absent. */
  async once<T>(toolCallId: string, task: () => Promise<T>): Promise<T | undefined> {
    const key = this.answeredKey(toolCallId);
    if ((await this.redis.client.set(key, '1', { NX: true, PX: APPROVAL_MEMORY_MS })) === null) return undefined;
    try {
      return await task();
    } catch (error) {
      await this.redis.client.del(key).catch(() => {
        // the request key expires by itself
      });
      throw error;
    }
  }

  /**
   * Resumes a run of this process for the process that asked, relaying its output there. Its own
   * abort signal never fires: a cut comes as an abort of the thread's run, as for any run here.
   */
  private async resumeForAsker(agent: Agent, request: ResumeRequest, relay: string): Promise<{ relayed: true }> {
    const capture = new ResultCapture();
    const output = await resumeHere(agent, request, { signal: new AbortController().signal, onStepFinish: capture.onStepFinish, proxy: this.proxy });
    const { runId } = request.target;
    const relaying = relayOutput(
      output,
      capture,
      (text) => this.redis.client.publish(relay, text),
      () => this.endings.wasCut(runId),
    );
    // An abort here waits for the run's end, as it does for a run a `/run` of this process reads.
    this.endings.track(runId, Promise.all([relaying, outputFinished(output)]));
    return { relayed: true };
  }

  private answeredKey(toolCallId: string): string {
    return `${this.redis.prefix}:approved:${toolCallId}`;
  }

  private async queueHere(agent: Agent, thread: ThreadTarget, message: AgentMessage, routing: Routing, onWake?: OnWake): Promise<SignalDecision> {
    await this.untilLetGo(agent, thread);
    return queueMessage(agent, message, { ...routing, ...thread }, onWake);
  }

  /**
   * Waits (bounded) while a run here is finishing: its output is over, so Mastra no longer counts
   * it as the thread's run, yet, its end unhandled, it still holds the lease. Sent or queued then,
   * Mastra 1.71 drops the run's claim on the thread to wake another, and the finishing run neither
   * hands the thread on nor lets go (a stale lease; what was queued behind it parks).
   */
  private async untilLetGo(agent: Agent, thread: ThreadTarget): Promise<void> {
    const deadline = Date.now() + LET_GO_MS;
    while (Date.now() < deadline && this.holds(thread) && activeThreadRunId(agent, thread) === undefined) await delay(LET_GO_POLL_MS);
  }

  /** Whether another process's run holds the thread (a stopped run there is resumed there). */
  private async heldElsewhere(thread: ThreadTarget): Promise<boolean> {
    return !this.holds(thread) && (await this.holders.owner(thread)) !== undefined;
  }

  private holds(thread: ThreadTarget): boolean {
    return this.holders.here(thread);
  }

  /**
   * New input for the holder of the thread; `undefined` when it did not answer. That holder is
   * gone: before the input is sent here, recovery adopts what its dead run took (`afterSilence`),
   * or the input would come before messages acknowledged earlier.
   */
  private async askHolder(request: Omit<Request, 'id' | 'replyTo'>): Promise<unknown> {
    const answer = await this.ask(request);
    if (answer === undefined) await this.holders.afterSilence(request.thread);
    return answer;
  }

  /**
   * Asks the process that holds the thread; `undefined` when none takes the request in time (the
   * asker then does it itself). A request the holder took is never done here as well: a message
   * sent twice would reach the run twice (Mastra then takes a turn with nothing new).
   */
  private async ask(request: Omit<Request, 'id' | 'replyTo'>): Promise<unknown> {
    await this.start();
    const id = randomUUID();
    return new Promise((resolve, reject) => {
      let timer = setTimeout(() => done({ id }), REPLY_TIMEOUT_MS);
      const done = (reply: Reply) => {
        if (reply.taken) {
          clearTimeout(timer);
          timer = setTimeout(
            () => done({ id, error: `the process that holds thread ${request.thread.threadId} took the request and did not answer` }),
            TAKEN_TIMEOUT_MS,
          );
          return;
        }
        clearTimeout(timer);
        this.waiting.delete(id);
        if (reply.refusal) reject(new BridgeError(reply.refusal.status, reply.refusal.code, reply.error ?? ''));
        else if (reply.error) reject(unavailable(`Thread control: ${reply.error}`));
        else resolve(reply.result);
      };
      this.waiting.set(id, done);
      this.redis.client
        .publish(this.channel, JSON.stringify({ ...request, id, replyTo: this.replyTo, ...withTraceparent() }))
        .catch((error: unknown) => done({ id, error: errorMessage(error) }));
    });
  }

  /** A request from any process (this one too): answered only by the holder of the thread. */
  private async handle(request: Request): Promise<void> {
    if (request.replyTo === this.replyTo || !this.holds(request.thread)) return;
    await this.reply(request.replyTo, { id: request.id, taken: true });
    let reply: Reply;
    try {
      reply = { id: request.id, result: await inTraceOf(request.traceparent, () => this.perform(request)) };
    } catch (error) {
      reply = { id: request.id, error: errorMessage(error), ...(error instanceof BridgeError && { refusal: { status: error.status, code: error.code } }) };
    }
    await this.reply(request.replyTo, reply);
  }

  private reply(to: string, reply: Reply): Promise<void> {
    return this.redis.client.publish(to, JSON.stringify(reply)).then(
      () => undefined,
      (error: unknown) => this.logger.warn(`Thread control reply failed: ${errorMessage(error)}`),
    );
  }

  private perform(request: Request): Promise<unknown> {
    // A run the bridge streams itself has no agent of its own.
    if (request.op === 'stop') return this.local.stopStreamed(request.thread, request.reason ?? 'Aborted');
    const agent = this.agents.get(request.agentId);
    if (request.op === 'abort') return this.local.abort(agent, request.thread, { untilEnded: request.untilEnded });
    if (request.op === 'send') {
      if (request.outgoing === undefined) throw new Error('A send request carries nothing to send');
      return this.sendHere(agent, request.thread, request.outgoing, request.options ?? {});
    }
    if (request.op === 'queue') {
      if (request.message === undefined) throw new Error('A queue request carries no message');
      return this.queueHere(agent, request.thread, request.message, request.options ?? {});
    }
    if (request.op === 'resume') {
      if (request.resume === undefined || request.relay === undefined) throw new Error('A resume request carries nothing to resume');
      return this.resumeForAsker(agent, request.resume, request.relay);
    }
    if (request.op === 'answer') {
      if (request.answer === undefined) throw new Error('An answer request carries no answer');
      return this.local.answerCall(agent, request.thread, request.answer);
    }
    return this.local.cancelQueued(agent, request.thread, request.signalIds ?? []);
  }
}
