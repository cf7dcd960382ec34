import { randomUUID } from 'node:crypto';
import type { Agent } from '@mastra/core/agent';
import { inject, injectable } from 'inversify';
import type { AgentProvider } from '../agents/agent-provider.js';
import type { ResolvedConfig } from '../config.js';
import { BridgeError, unavailable } from '../errors.js';
import type { BridgeLogger } from '../logger.js';
import { TOKENS } from '../tokens.js';
import { outgoingWithId, type AgentMessage, type OnWake, type Outgoing, type Routing, type SignalDecision, type ThreadTarget } from '../agents/mastra.js';
import { sendPastFinishingRun } from '../threads/finishing-run.js';
import { InProcessThreadControl, APPROVAL_MEMORY_MS, type AbortOptions, type ThreadControl } from '../threads/thread-control.js';
import type { RunEndings } from '../threads/run-endings.js';
import type { AnsweredCall, CallAnswer } from '../threads/answer-call.js';
import { threadLeaseKey } from '../threads/thread-lease.js';
import { errorMessage } from '../translate/values.js';
import type { RedisConnection } from './connection.js';

/** Whether this process runs the run that holds a thread's lease (the Redis pub/sub knows its own leases), and who holds one. */
export interface LocalLeases {
  holdsLease(key: string): boolean;
  getLeaseOwner(key: string): Promise<string | undefined>;
}

type Op = 'abort' | 'send' | 'queue' | 'cancel' | 'answer';
interface Request {
  id: string;
  op: Op;
  agentId: string;
  thread: ThreadTarget;
  /** What a `queue` queues. */
  message?: AgentMessage;
  /** What a `send` puts into the run. */
  outgoing?: Outgoing;
  /** The message's routing (`ifActive`, `ifIdle`); named `options` on the wire. */
  options?: Routing;
  signalIds?: string[];
  /** How an `answer` answers the waiting call. */
  answer?: CallAnswer;
  /** An abort answered once the run wound down. */
  untilEnded?: boolean;
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

/** How long a request waits for the process that holds the thread to take it: past it, nobody does. */
const REPLY_TIMEOUT_MS = 2000;
/**
 * How long a taken request waits for its answer: the holder's work is bounded (a send past a
 * finishing run 2 s, an abort's wind-down 5 s), so past this the holder is stuck or gone.
 */
const TAKEN_TIMEOUT_MS = 15_000;

/**
 * Abort, send, queue, cancel-queued and answering a waiting call for several bridge processes on one Redis. Mastra 1.71 does
 * these only for runs of its own process, so the request goes to the process whose run holds the
 * thread's lease: every process listens on one control channel, and the holder does it with
 * Mastra's own methods and answers on the asker's reply channel. A thread no process holds is
 * idle: the asking process does it itself (a queued message then wakes the thread).
 *
 * @example
 * const control = new RedisThreadControl(redis, pubsub, agents, config);
 * await control.start();
 */
@injectable()
export class RedisThreadControl implements ThreadControl {
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
    @inject(TOKENS.Leases) private readonly leases: LocalLeases,
    @inject(TOKENS.AgentProvider) private readonly agents: Pick<AgentProvider, 'get'>,
    @inject(TOKENS.Config) config: Pick<ResolvedConfig, 'logger'>,
    @inject(TOKENS.RunEndings) endings: RunEndings,
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

  /**
   * Sent where the thread's run is: Mastra would send it on from here as a hand-off to that run,
   * which it drops if the run ends as it comes. The holder sends it into its own run, past that
   * run's end (`sendPastFinishingRun`); a thread nobody holds is woken from here.
   */
  async send(agent: Agent, thread: ThreadTarget, outgoing: Outgoing, routing: Routing, onWake?: OnWake): Promise<SignalDecision> {
    // Nobody holds the thread (a run that held it was let go of, here or elsewhere): it wakes here.
    if ((await this.leases.getLeaseOwner(threadLeaseKey(thread))) === undefined) return this.local.send(agent, thread, outgoing, routing, onWake);
    if (this.holds(thread)) return this.sendHere(agent, thread, outgoing, routing, onWake);
    const remote = (await this.ask({ op: 'send', agentId: agent.id, thread, outgoing, options: routing })) as SignalDecision | undefined;
    return remote ?? this.local.send(agent, thread, outgoing, routing, onWake);
  }

  /** Into a run of this process: one that is finishing does not take it, and it is sent again. */
  private sendHere(agent: Agent, thread: ThreadTarget, outgoing: Outgoing, routing: Routing, onWake?: OnWake): Promise<SignalDecision> {
    const takeBack = (id: string) => this.local.cancelQueued(agent, thread, [id]);
    return sendPastFinishingRun(agent, thread, (id) => this.local.send(agent, thread, outgoingWithId(outgoing, id), routing, onWake), takeBack);
  }

  async queue(agent: Agent, thread: ThreadTarget, message: AgentMessage, routing: Routing, onWake?: OnWake): Promise<SignalDecision> {
    if (this.holds(thread)) return this.local.queue(agent, thread, message, routing, onWake);
    const remote = (await this.ask({ op: 'queue', agentId: agent.id, thread, message, options: routing })) as SignalDecision | undefined;
    return remote ?? this.local.queue(agent, thread, message, routing, onWake);
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
    if (this.holds(thread) || (await this.leases.getLeaseOwner(threadLeaseKey(thread))) === undefined) return this.local.answerCall(agent, thread, answer);
    const remote = (await this.ask({ op: 'answer', agentId: agent.id, thread, answer })) as AnsweredCall | undefined;
    return remote ?? this.local.answerCall(agent, thread, answer);
  }

  /** The first approval of a call, in any process: a key set only if absent. */
  async once<T>(toolCallId: string, task: () => Promise<T>): Promise<T | undefined> {
    const key = `${this.redis.prefix}:approved:${toolCallId}`;
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

  private holds(thread: ThreadTarget): boolean {
    return this.leases.holdsLease(threadLeaseKey(thread));
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
          timer = setTimeout(() => done({ id, error: `the process that holds thread ${request.thread.threadId} took the request and did not answer` }), TAKEN_TIMEOUT_MS);
          return;
        }
        clearTimeout(timer);
        this.waiting.delete(id);
        if (reply.refusal) reject(new BridgeError(reply.refusal.status, reply.refusal.code, reply.error ?? ''));
        else if (reply.error) reject(unavailable(`Thread control: ${reply.error}`));
        else resolve(reply.result);
      };
      this.waiting.set(id, done);
      this.redis.client.publish(this.channel, JSON.stringify({ ...request, id, replyTo: this.replyTo })).catch((error: unknown) => done({ id, error: errorMessage(error) }));
    });
  }

  /** A request from any process (this one too): answered only by the holder of the thread. */
  private async handle(request: Request): Promise<void> {
    if (request.replyTo === this.replyTo || !this.holds(request.thread)) return;
    await this.reply(request.replyTo, { id: request.id, taken: true });
    let reply: Reply;
    try {
      reply = { id: request.id, result: await this.perform(request) };
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
    const agent = this.agents.get(request.agentId);
    if (request.op === 'abort') return this.local.abort(agent, request.thread, { untilEnded: request.untilEnded });
    if (request.op === 'send') {
      if (request.outgoing === undefined) throw new Error('A send request carries nothing to send');
      return this.sendHere(agent, request.thread, request.outgoing, request.options ?? {});
    }
    if (request.op === 'queue') {
      if (request.message === undefined) throw new Error('A queue request carries no message');
      return this.local.queue(agent, request.thread, request.message, request.options ?? {});
    }
    if (request.op === 'answer') {
      if (request.answer === undefined) throw new Error('An answer request carries no answer');
      return this.local.answerCall(agent, request.thread, request.answer);
    }
    return this.local.cancelQueued(agent, request.thread, request.signalIds ?? []);
  }
}
