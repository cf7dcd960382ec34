import { inject, injectable, unmanaged } from 'inversify';
import { LuaScript } from './pubsub/index.js';
import type { ResolvedConfig } from '../config.js';
import type { BridgeLogger } from '../logger.js';
import { conflict, notFound } from '../errors.js';
import { toolCancelled, toolTimedOut, type ToolCallAnswer, type ToolProxy } from '../runs/tool-proxy.js';
import { TOKENS } from '../tokens.js';
import { errorMessage } from '../text.js';
import type { RedisConnection } from './connection.js';
import { redisKeys, type RedisKeys } from './keys.js';

// A call's slot is a hash: `resource` (who may answer), `state`, and `answer` (JSON). States:
// `pending` → `answered` → `taken` (by the tool), or `pending` → `closed` (timed out, cancelled,
// run over). `answered` and `taken` stay until the TTL (a second answer is 409, not 404); `closed`
// stays so a command reordered behind it (`NOSCRIPT` re-sends) cannot reopen the slot.

/**
 * Opens the slot if it has none (first comer's resource), keeps a pending one alive, and with
 * take=1 takes an answer there. KEYS: slot. ARGV: resource, ttl, take. Answers its JSON or nil.
 */
const OPEN = new LuaScript(`
local state = redis.call('HGET', KEYS[1], 'state')
if not state then
  redis.call('HSET', KEYS[1], 'resource', ARGV[1], 'state', 'pending')
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return false
end
if state == 'pending' then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if ARGV[3] ~= '1' or state ~= 'answered' then return false end
local answer = redis.call('HGET', KEYS[1], 'answer')
redis.call('HSET', KEYS[1], 'state', 'taken')
redis.call('HDEL', KEYS[1], 'answer')
return answer
`);

/**
 * Claims a pending slot for an answer and wakes its waiter (on the slot's own name).
 * KEYS: slot. ARGV: resource, answer JSON, ttl. Answers `ok`, `answered` or `missing`.
 */
const ANSWER = new LuaScript(`
local slot = redis.call('HMGET', KEYS[1], 'resource', 'state')
if slot[1] ~= ARGV[1] or slot[2] == 'closed' then return 'missing' end
if slot[2] ~= 'pending' then return 'answered' end
redis.call('HSET', KEYS[1], 'state', 'answered', 'answer', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PUBLISH', KEYS[1], 'answered')
return 'ok'
`);

/**
 * Closes a slot nobody answered; an answer that got there first is kept (for the 409) and, with
 * take=1, taken instead. KEYS: slot. ARGV: ttl, take. Answers the answer's JSON or nil.
 */
const CLOSE = new LuaScript(`
local state = redis.call('HGET', KEYS[1], 'state')
if state == 'answered' and ARGV[2] == '1' then
  local answer = redis.call('HGET', KEYS[1], 'answer')
  redis.call('HSET', KEYS[1], 'state', 'taken')
  redis.call('HDEL', KEYS[1], 'answer')
  return answer
end
if state == 'answered' or state == 'taken' then return false end
redis.call('HSET', KEYS[1], 'state', 'closed')
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return false
`);

export interface RedisToolProxyOptions {
  /** How long a slot lives in Redis after it was opened, renewed or answered (an answered one: to answer a second post 409). Default `frontendToolTimeoutMs` + 60 s. */
  slotTtlMs?: number;
  /** How often a waiting tool looks at its slot in case a wake-up was lost (while its subscriber reconnected). Default 5000. */
  recheckMs?: number;
}

interface Slot {
  key: string;
  resourceId: string;
}

/**
 * `ToolProxy` shared by every process on one Redis: a run's tool may wait in one process and the
 * client's answer be posted to another. Slots live in Redis with a TTL; an answer is claimed
 * atomically (a Lua script: a second one, from any process, is `409`), stored, and the waiter woken
 * by a publish on the slot's name, to take the answer from the slot. The calls this process opened
 * are remembered by run, for `rejectRun` (which the run's own process calls).
 *
 * @example
 * const proxy = new RedisToolProxy(await connectRedis(url, 'bridge'), config);
 * proxy.expect(runId, toolCallId, resourceId);                                   // process A
 * const answer = await proxy.wait(runId, toolCallId, 'pick_color', signal, resourceId); // process A
 * await proxy.answer(runId, toolCallId, resourceId, { content: 'teal' });       // process B
 */
@injectable()
export class RedisToolProxy implements ToolProxy {
  /** Calls opened here, by run (`runOf`): the waiting ones with their wait. */
  private readonly runs = new Map<string, Map<string, WaitingCall | undefined>>();
  private readonly keys: RedisKeys;
  private readonly timeoutMs: number;
  private readonly slotTtlMs: number;
  private readonly recheckMs: number;
  private readonly logger: BridgeLogger;

  constructor(
    @inject(TOKENS.Redis) private readonly redis: RedisConnection,
    @inject(TOKENS.Config) config: ResolvedConfig,
    @unmanaged() options: RedisToolProxyOptions = {},
  ) {
    this.keys = redisKeys(redis.prefix);
    this.timeoutMs = config.frontendToolTimeoutMs;
    this.slotTtlMs = options.slotTtlMs ?? config.frontendToolTimeoutMs + 60_000;
    this.recheckMs = options.recheckMs ?? 5000;
    this.logger = config.logger;
  }

  expect(runId: string, toolCallId: string, resourceId: string): void {
    this.remember(resourceId, runId, toolCallId);
    // Not awaited (the interface is synchronous): written to the connection now, before the call
    // is streamed to the client, and ahead of any answer this process posts on that connection.
    OPEN.run(this.redis.client, [this.keys.tool(runId, toolCallId)], [resourceId, String(this.slotTtlMs), '0']).catch((error: unknown) =>
      this.logger.error(`Tool call ${toolCallId} of run ${runId}: could not open its slot: ${errorMessage(error)}`),
    );
  }

  wait(runId: string, toolCallId: string, toolName: string, signal: AbortSignal | undefined, resourceId: string): Promise<ToolCallAnswer> {
    const call = new WaitingCall(
      this.redis,
      { key: this.keys.tool(runId, toolCallId), resourceId },
      {
        toolName,
        signal,
        timeoutMs: this.timeoutMs,
        slotTtlMs: this.slotTtlMs,
        recheckMs: this.recheckMs,
      },
    );
    this.remember(resourceId, runId, toolCallId, call);
    return call.answer.finally(() => this.forget(resourceId, runId, toolCallId, call));
  }

  async answer(runId: string, toolCallId: string, resourceId: string, answer: ToolCallAnswer): Promise<void> {
    const key = this.keys.tool(runId, toolCallId);
    const outcome = await ANSWER.run(this.redis.client, [key], [resourceId, JSON.stringify(answer), String(this.slotTtlMs)]);
    // Another resource's call is answered exactly like an unknown one.
    if (outcome === 'answered') throw conflict(`Tool call ${toolCallId} was already answered`);
    if (outcome !== 'ok') throw notFound('TOOL_CALL_NOT_FOUND', `No pending tool call ${toolCallId} in run ${runId}`);
  }

  rejectRun(runId: string, resourceId: string, reason: string): void {
    const calls = this.runs.get(runOf(resourceId, runId));
    this.runs.delete(runOf(resourceId, runId));
    for (const [toolCallId, call] of calls ?? []) {
      if (call) call.close(reason);
      else this.closeUnwaited(runId, toolCallId);
    }
  }

  /** A call announced but never waited on: a late answer must find it gone (404). */
  private closeUnwaited(runId: string, toolCallId: string): void {
    CLOSE.run(this.redis.client, [this.keys.tool(runId, toolCallId)], [String(this.slotTtlMs), '0']).catch((error: unknown) =>
      this.logger.warn(`Tool call ${toolCallId} of run ${runId}: could not close its slot: ${errorMessage(error)}`),
    );
  }

  private remember(resourceId: string, runId: string, toolCallId: string, call?: WaitingCall): void {
    let calls = this.runs.get(runOf(resourceId, runId));
    if (!calls) this.runs.set(runOf(resourceId, runId), (calls = new Map<string, WaitingCall | undefined>()));
    if (call || !calls.has(toolCallId)) calls.set(toolCallId, call);
  }

  private forget(resourceId: string, runId: string, toolCallId: string, call: WaitingCall): void {
    const calls = this.runs.get(runOf(resourceId, runId));
    if (calls?.get(toolCallId) !== call) return;
    calls.delete(toolCallId);
    if (calls.size === 0) this.runs.delete(runOf(resourceId, runId));
  }
}

/** A run as this process remembers its calls: a run id is the client's, and another resource may choose the same. */
const runOf = (resourceId: string, runId: string) => `${resourceId}\0${runId}`;

interface WaitOptions {
  toolName: string;
  signal: AbortSignal | undefined;
  timeoutMs: number;
  slotTtlMs: number;
  recheckMs: number;
}

/**
 * One tool waiting for its answer: opens the slot, listens on its name, and takes the answer
 * when woken (or at a recheck); fails on its timeout, on the signal or on `close`, unless Redis
 * shows an answer got there first.
 */
class WaitingCall {
  readonly answer: Promise<ToolCallAnswer>;
  private resolve!: (answer: ToolCallAnswer) => void;
  private reject!: (error: Error) => void;
  private settled = false;
  private readonly cleanups: Array<() => void> = [];
  private readonly onWake = () =>
    void this.take().catch(() => {
      // a slot that cannot be taken now is tried again at the next wake or times out
    });

  constructor(
    private readonly redis: RedisConnection,
    private readonly slot: Slot,
    private readonly options: WaitOptions,
  ) {
    this.answer = new Promise<ToolCallAnswer>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    void this.start();
    this.armTimers();
  }

  /** Fails the wait with `reason`, unless the slot holds an answer already. */
  close(reason: string): void {
    if (this.settled) return;
    const args = [String(this.options.slotTtlMs), '1'];
    CLOSE.run(this.redis.client, [this.slot.key], args).then(
      (answer) => (answer === null ? this.fail(new Error(reason)) : this.succeed(answer)),
      () => this.fail(new Error(reason)),
    );
  }

  private armTimers(): void {
    const { toolName, signal, timeoutMs, recheckMs } = this.options;
    const timeout = setTimeout(() => this.close(toolTimedOut(toolName, timeoutMs)), timeoutMs);
    const recheck = setInterval(this.onWake, recheckMs);
    recheck.unref();
    const onAbort = () => this.close(toolCancelled(toolName));
    signal?.addEventListener('abort', onAbort, { once: true });
    this.cleanups.push(
      () => clearTimeout(timeout),
      () => clearInterval(recheck),
      () => signal?.removeEventListener('abort', onAbort),
    );
    if (signal?.aborted) onAbort();
  }

  /**
   * Opens the slot at once, on the command connection, so that an answer this process posts right
   * after `wait()` finds it; subscribed before the answer is looked for, so that one posted in
   * between still wakes the wait.
   */
  private async start(): Promise<void> {
    const { key, resourceId } = this.slot;
    const opening = OPEN.run(this.redis.client, [key], [resourceId, String(this.options.slotTtlMs), '0']);
    try {
      await Promise.all([opening, this.listen()]);
      await this.take();
    } catch (error) {
      this.fail(new Error(`Frontend tool ${this.options.toolName} could not wait for its result: ${errorMessage(error)}`));
    }
  }

  /** Subscribes to the slot's name; a wait settled meanwhile unsubscribes at once. */
  private async listen(): Promise<void> {
    const { subscriber } = this.redis;
    await subscriber.subscribe(this.slot.key, this.onWake);
    this.cleanups.push(
      () =>
        void subscriber.unsubscribe(this.slot.key, this.onWake).catch(() => {
          // cleanup: a subscription left behind goes with its connection
        }),
    );
    if (this.settled) this.cleanup();
  }

  /** Opens the slot if need be (renewing it), and takes the answer if it is there. */
  private async take(): Promise<void> {
    if (this.settled) return;
    const answer = await OPEN.run(this.redis.client, [this.slot.key], [this.slot.resourceId, String(this.options.slotTtlMs), '1']);
    if (answer !== null) this.succeed(answer);
  }

  private succeed(answer: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.cleanup();
    this.resolve(JSON.parse(String(answer)) as ToolCallAnswer);
  }

  private fail(error: Error): void {
    if (this.settled) return;
    this.settled = true;
    this.cleanup();
    this.reject(error);
  }

  private cleanup(): void {
    for (const cleanup of this.cleanups.splice(0)) cleanup();
  }
}
