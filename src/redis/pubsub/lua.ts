import { createHash } from 'node:crypto';

/** Runs Lua scripts: what the Redis modules need of a command connection. */
export interface ScriptRunner {
  evalSha(sha: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

/**
 * A Lua script run by its SHA1 (`EVALSHA`), sent whole only when Redis does not know it yet
 * (`NOSCRIPT`: first use, or after a restart or `SCRIPT FLUSH`).
 *
 * @example
 * const DEL_IF = new LuaScript("if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0");
 * await DEL_IF.run(client, ['lock:a'], [token]);
 */
export class LuaScript {
  readonly sha: string;

  constructor(readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  async run(redis: ScriptRunner, keys: string[], args: string[]): Promise<unknown> {
    const options = { keys, arguments: args };
    try {
      return await redis.evalSha(this.sha, options);
    } catch (error) {
      if (!String((error as Error)?.message).startsWith('NOSCRIPT')) throw error;
      return redis.eval(this.source, options);
    }
  }
}
