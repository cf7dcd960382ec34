import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { SignJWT } from 'jose';
import type { z } from 'zod';
import type { ServerEnvSchema } from './env.js';

/** What the command line asks for: the server (no arguments), help, the version, or a token. */
export type CliCommand = { kind: 'serve' } | { kind: 'help' } | { kind: 'version' } | { kind: 'token'; sub: string; ttl: string };

/** A command line the bin does not take: its message, then exit code 2. */
export class UsageError extends Error {}

/**
 * Reads the bin's arguments. No argument starts the server; `--help`, `--version` and
 * `token --sub <resource> [--ttl <time>]` do what they say; anything else is a `UsageError`.
 *
 * @example
 * parseCli(['token', '--sub', 'alice', '--ttl', '1h']); // { kind: 'token', sub: 'alice', ttl: '1h' }
 */
export function parseCli(args: readonly string[]): CliCommand {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      allowPositionals: true,
      strict: true,
      options: { help: { type: 'boolean', short: 'h' }, version: { type: 'boolean', short: 'v' }, sub: { type: 'string' }, ttl: { type: 'string' } },
    });
  } catch (error) {
    // Node's message for an unknown option goes on about positionals: its first sentence is enough.
    throw new UsageError((error as Error).message.replace(/^(Unknown option '[^']+')\..*$/s, '$1'));
  }
  const { values, positionals } = parsed;
  if (values.help) return { kind: 'help' };
  if (values.version) return { kind: 'version' };
  const [command, ...rest] = positionals;
  if (command === undefined && values.sub === undefined && values.ttl === undefined) return { kind: 'serve' };
  if (command !== 'token') throw new UsageError(command === undefined ? '--sub and --ttl go with the token command' : `Unknown command '${command}'`);
  if (rest.length > 0) throw new UsageError(`Unexpected argument '${rest[0]}'`);
  if (!values.sub) throw new UsageError('token needs --sub <resource>, the resource the token names');
  return { kind: 'token', sub: values.sub, ttl: values.ttl ?? '1h' };
}

/** One line per environment variable of the standalone server; the compiler holds it to the schema. */
const ENV_HELP = {
  PORT: 'port to listen on (default 4111; 0 picks a free one)',
  HOST: 'interface to listen on (default 127.0.0.1; 0.0.0.0 in a container)',
  DATABASE_URL: 'LibSQL or PostgreSQL URL (default file:.data/bridge.db)',
  DATABASE_TIMEOUT_MS: 'PostgreSQL connect and query timeout (default 2500)',
  REDIS_URL: 'redis:// or rediss:// URL: processes share threads through it (default none)',
  REDIS_PREFIX: 'what every Redis key and channel starts with (default mastra-agui-bridge)',
  AGUI_PREFIX: 'the path the bridge is mounted under (default /agui)',
  MODEL: 'a Mastra model id, e.g. openai/gpt-5-mini (default: the scripted demo model)',
  DEMO_DELAY_MS: "milliseconds between the scripted model's stream parts (default 20)",
  SLOW_TASK_MS: "how long the demo's slow_task takes, in milliseconds (default 2000)",
  DEMO_CALL_LOG: 'a file the scripted model appends a JSON line to per call (default none)',
  IDEMPOTENCY_TTL_MS: "how long an Idempotency-Key's first answer is kept (default 24 h)",
  SCHEDULER_TICK_MS: 'how often due schedules are looked for (default 1000)',
  SCHEDULE_MIN_INTERVAL_S: 'the shortest time between two fires of a schedule, in seconds (default 60)',
  MAX_SCHEDULES_PER_RESOURCE: 'how many schedules one resource may hold (default 50)',
  AUTH_JWT_SECRET: 'auth on: HS256 tokens signed with this secret (32 bytes or more)',
  AUTH_JWKS_URL: 'auth on: RS256 / ES256 tokens whose keys this JWKS URL publishes',
  AUTH_ISSUER: 'the iss every token must carry (default none)',
  AUTH_AUDIENCE: 'an aud every token must carry (default none)',
  AUTH_RESOURCE_CLAIM: 'the token claim that names the resource (default sub)',
  AUTH_API_KEYS: 'auth on: key:resourceId pairs, comma-separated, for servers',
  METRICS_TOKEN: 'the bearer token GET /metrics wants (default: open)',
  LOG_LEVEL: 'fatal, error, warn, info, debug, trace or silent (default info)',
  LOG_FORMAT: 'json or pretty (default: pretty on a terminal, json elsewhere)',
  RATE_LIMIT_PER_MINUTE: 'requests per minute per resource on /run and steering (default 300; 0 no cap)',
  MAX_STREAMS_PER_RESOURCE: 'open event streams per resource (default 50; 0 no cap)',
  MAX_STREAMS: 'open event streams in all (default 10000; 0 no cap)',
  MAX_RUNS_PER_RESOURCE: '/runs streaming at once per resource (default 10; 0 no cap)',
  HEADERS_TIMEOUT_MS: 'how long a client may take to send its headers (default 10000)',
  REQUEST_TIMEOUT_MS: 'how long a client may take to send its request (default 30000)',
  KEEP_ALIVE_TIMEOUT_MS: 'how long an idle keep-alive connection stays open (default 5000)',
  SHUTDOWN_GRACE_MS: 'on SIGTERM, how long runs in flight may take to finish (default 25000)',
  ALLOWED_HOSTS: 'host names the server answers to besides loopback, comma-separated',
  ALLOWED_URL_HOSTS: 'hosts whose http(s) URLs input messages may carry, comma-separated',
  CORS_ORIGINS: 'browser origins allowed to call the bridge, comma-separated (default none)',
  OTEL_EXPORTER_OTLP_ENDPOINT: 'traces on: the OTLP collector, e.g. http://localhost:4318 (with the other OTEL_* variables)',
  MASTRA_SPANS: "with traces on, how much of Mastra's own spans they hold: on (default: agent, model, tool, workflow), all, off",
  WEBHOOK_URLS: "where every run's end is POSTed (Standard Webhooks), comma-separated; with WEBHOOK_SECRET",
  WEBHOOK_SECRET: 'the key webhooks are signed with: whsec_ and base64, e.g. whsec_$(openssl rand -base64 32)',
} satisfies Record<keyof z.input<typeof ServerEnvSchema>, string>;

/** The bin's usage: its commands and every environment variable, one line each. */
export function helpText(): string {
  const width = Math.max(...Object.keys(ENV_HELP).map((name) => name.length)) + 2;
  const lines = Object.entries(ENV_HELP).map(([name, text]) => `  ${name.padEnd(width)}${text}`);
  return [
    'mastra-agui-bridge: Mastra agents behind AG-UI, with thread signals over SSE',
    '',
    'Usage:',
    '  mastra-agui-bridge                       start the server (the demo agent, on http://127.0.0.1:4111)',
    '  mastra-agui-bridge token --sub <resource> [--ttl 1h]',
    '                                           print a JWT for <resource>, signed with AUTH_JWT_SECRET',
    '  mastra-agui-bridge --help | --version',
    '',
    'Environment:',
    ...lines,
    `  ${'<PROVIDER>_API_KEY'.padEnd(width)}the key of MODEL's provider, e.g. OPENAI_API_KEY (checked at start)`,
    `  ${'OPENAI_BASE_URL'.padEnd(width)}an OpenAI-compatible server's /v1 URL, for MODEL=openai/<model>`,
    '',
    'Docs: docs/configuration.md in the package',
  ].join('\n');
}

/** Where the package's package.json is: one folder up from dist/, two from src/server/. */
const PACKAGE_JSON = ['../package.json', '../../package.json'];

export function packageVersion(): string {
  for (const path of PACKAGE_JSON) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'mastra-agui-bridge' && pkg.version) return pkg.version;
    } catch {
      // not this folder: try the next one up
    }
  }
  return 'unknown';
}

/**
 * A token to try authentication with: HS256, signed with `AUTH_JWT_SECRET`, naming `sub` in the
 * claim the server reads (`AUTH_RESOURCE_CLAIM`), with `AUTH_ISSUER` / `AUTH_AUDIENCE` when set.
 *
 * @example
 * await mintToken({ AUTH_JWT_SECRET: secret }, 'alice', '1h'); // 'eyJhbGciOiJIUzI1NiJ9…'
 */
export async function mintToken(
  env: { AUTH_JWT_SECRET?: string; AUTH_ISSUER?: string; AUTH_AUDIENCE?: string; AUTH_RESOURCE_CLAIM?: string },
  sub: string,
  ttl: string,
): Promise<string> {
  if (!env.AUTH_JWT_SECRET) throw new UsageError('token needs AUTH_JWT_SECRET, the secret the server checks tokens with');
  const claim = env.AUTH_RESOURCE_CLAIM ?? 'sub';
  const jwt = new SignJWT(claim === 'sub' ? {} : { [claim]: sub }).setProtectedHeader({ alg: 'HS256' }).setSubject(sub).setIssuedAt();
  if (env.AUTH_ISSUER) jwt.setIssuer(env.AUTH_ISSUER);
  if (env.AUTH_AUDIENCE) jwt.setAudience(env.AUTH_AUDIENCE);
  try {
    jwt.setExpirationTime(ttl);
  } catch {
    throw new UsageError(`--ttl '${ttl}' is not a time span (e.g. 30m, 1h, 7d)`);
  }
  return jwt.sign(new TextEncoder().encode(env.AUTH_JWT_SECRET));
}
