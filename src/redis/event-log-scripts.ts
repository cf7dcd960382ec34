import { EventType, type Event } from '@ag-ui/core';
import { isRunEnd } from '../translate/close-run.js';
import { LuaScript } from './pubsub/index.js';

/*
 * What the shared thread log (`RedisEventLogs`) runs in Redis, each step atomic, and how a batch
 * moves the run open on the thread (the counter's `open` field).
 */

/** A new thread's counter: Redis's clock in milliseconds × 1000, as a feed's base in one process (`feedBase`). */
const CLOCK_BASE = `
local function clockBase()
  local t = redis.call('TIME')
  return (tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)) * 1000
end`;

/**
 * Numbers a batch and appends it: ids continue the thread's counter (`clockBase` when new), each
 * event an entry `<id>-0` of the thread's stream, the batch published on the thread's channel as
 * `<firstId> <json array>`, the open run remembered (`open`: its RUN_STARTED's id, `run`: its run
 * id) or forgotten (`closed`: the run it closed). KEYS: stream, meta, and a key that may be set
 * once (or none). ARGV: channel, maxlen, ttl, open change (`keep`, `clear` or the index of the
 * batch's last RUN_STARTED, 0-based), that run's id, the run the batch goes on (`''`: any), the
 * thread id, events… Answers nothing, writing nothing, when the run the batch goes on was closed in
 * the log meanwhile (settled as lost, or another run opened), or when the once key is set already.
 * A run the log has no trace of (Redis restarted empty under it) is opened again: a RUN_STARTED
 * goes before the batch, so the log stays a sequence of whole brackets.
 */
export const APPEND = new LuaScript(`${CLOCK_BASE}
local open = redis.call('HGET', KEYS[2], 'run')
local reopen = false
if ARGV[6] ~= '' and open ~= ARGV[6] then
  if open or redis.call('HGET', KEYS[2], 'closed') == ARGV[6] then return false end
  reopen = true
end
if KEYS[3] and not redis.call('SET', KEYS[3], '1', 'NX', 'PX', ARGV[3]) then return false end
local events = {}
for i = 8, #ARGV do events[#events + 1] = ARGV[i] end
local change = ARGV[4]
local runId = ARGV[5]
if reopen then
  table.insert(events, 1, cjson.encode({type = 'RUN_STARTED', threadId = ARGV[7], runId = ARGV[6]}))
  if change == 'keep' then change, runId = '0', ARGV[6]
  elseif change ~= 'clear' then change = tostring(tonumber(change) + 1) end
end
local last = tonumber(redis.call('HGET', KEYS[2], 'last')) or clockBase()
local first = last + 1
for i = 1, #events do
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], string.format('%.0f-0', last + i), 'e', events[i])
end
last = last + #events
redis.call('HSET', KEYS[2], 'last', string.format('%.0f', last))
if change == 'clear' then
  local closed = redis.call('HGET', KEYS[2], 'run') or ARGV[6]
  redis.call('HDEL', KEYS[2], 'open', 'run')
  if closed ~= '' then redis.call('HSET', KEYS[2], 'closed', closed) end
elseif change ~= 'keep' then
  redis.call('HSET', KEYS[2], 'open', string.format('%.0f', first + tonumber(change)), 'run', runId)
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
redis.call('PUBLISH', ARGV[1], string.format('%.0f', first) .. ' [' .. table.concat(events, ',') .. ']')
return string.format('%.0f', first)
`);

/** The counter (started from the server's clock when the thread has none) and the open run's start. KEYS: meta. ARGV: ttl. */
export const POSITION = new LuaScript(`${CLOCK_BASE}
if redis.call('HSETNX', KEYS[1], 'last', '0') == 1 then
  redis.call('HSET', KEYS[1], 'last', string.format('%.0f', clockBase()))
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return redis.call('HMGET', KEYS[1], 'last', 'open')
`);

/** How a batch moves the open run: where its last RUN_STARTED is (and its run), or that it closes the run. */
export function openChange(events: readonly Event[]): [change: string, runId: string] {
  let change: [string, string] = ['keep', ''];
  events.forEach((event, i) => {
    if (event.type === EventType.RUN_STARTED) change = [String(i), event.runId];
    else if (isRunEnd(event)) change = ['clear', ''];
  });
  return change;
}

/** The run open after `events`, given the one open before them. */
export function runAfter(open: string | undefined, events: readonly Event[]): string | undefined {
  const [change, runId] = openChange(events);
  return change === 'keep' ? open : change === 'clear' ? undefined : runId;
}

/** A thread event id as its stream entry's id, and back: the log numbers its entries itself. */
export const entryId = (id: number) => `${id}-0`;
export const idOf = (entry: string) => Number(entry.slice(0, entry.indexOf('-')));
