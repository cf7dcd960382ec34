// CopilotKit's runtime (v2) in front of the bridge, and the React app (web/, once built into dist/)
// on the same origin. This is the code docs/client.md shows; test/copilotkit.test.ts and
// test/copilotkit-page.test.ts run it against a real bridge.
//
//   npx tsx examples/copilotkit/server.ts      (BRIDGE_URL defaults to http://127.0.0.1:4111/agui, PORT to 4000)
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { extname, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { HttpAgent } from '@ag-ui/client';
import { CopilotRuntime, createCopilotRuntimeHandler, type AgentsConfig } from '@copilotkit/runtime/v2';
import { createCopilotNodeHandler } from '@copilotkit/runtime/v2/node';

export const COPILOTKIT_PATH = '/api/copilotkit';
/** The bridge's agents and workflows (its `GET /agents`), for the app's picker. */
export const AGENTS_PATH = '/api/agents';
/** A thread's history, for the app to show after a reload: `<THREADS_PATH>/<threadId>?agent=<agentId>`. */
export const THREADS_PATH = '/api/threads/';

/** A page served by Vite's dev server (`npm run dev`), the usual other origin while developing. */
const DEV_ORIGINS = ['http://localhost:5173', 'http://127.0.0.1:5173'];

export interface RuntimeOptions {
  /**
   * Browser origins whose pages may call the runtime (CORS, preflights answered); default Vite's dev
   * server. A page served from the runtime's own origin needs none.
   */
  corsOrigins?: string[];
  /**
   * The built React app (`npm run build`) served at `/`; default `dist/` beside this file, when it
   * exists. The runtime's endpoint stays at COPILOTKIT_PATH.
   */
  staticDir?: string;
}

const BUILT_APP = fileURLToPath(new URL('./dist', import.meta.url));
const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.woff2': 'font/woff2',
};

/** The file a request path names inside `dir` (`index.html` for a folder); none for a path that leaves it or is not a path. */
function fileOf(dir: string, url: string): string | undefined {
  let path: string;
  try {
    path = decodeURIComponent(new URL(url, 'http://local').pathname);
  } catch {
    return undefined; // `%E0`: not a path
  }
  const file = resolve(dir, `.${path.endsWith('/') ? `${path}index.html` : path}`);
  return file.startsWith(resolve(dir) + sep) ? file : undefined;
}

/**
 * Answers a GET for a file of the built app, `index.html` for `/`. A path that leaves `dir` (`..`)
 * or names no file is 404.
 */
async function serveFile(dir: string, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const file = fileOf(dir, request.url ?? '/');
  const body = file && request.method === 'GET' ? await readFile(file).catch(() => undefined) : undefined;
  if (!file || !body) {
    response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    return;
  }
  response.writeHead(200, { 'content-type': CONTENT_TYPES[extname(file)] ?? 'application/octet-stream' }).end(body);
}

/** An agent or workflow as the bridge lists it (`GET /agents`). */
interface BridgeAgentInfo {
  id: string;
  name?: string;
  kind?: 'agent' | 'workflow';
  description?: string;
}

/**
 * A bridge route's JSON, asked as the caller (its `Authorization`, if any); `undefined` for a `404`
 * (a thread not stored yet). Any other failure is an error the caller sees.
 */
async function askBridge(bridgeUrl: string, path: string, authorization: string | null | undefined): Promise<unknown> {
  const response = await fetch(`${bridgeUrl}${path}`, { headers: authorization ? { authorization } : {} });
  if (response.status === 404) return undefined;
  if (!response.ok) throw new Error(`GET ${bridgeUrl}${path} answered ${response.status}`);
  return response.json();
}

/** What the bridge serves (`GET /agents`); a `404` there means the URL names no bridge. */
async function listBridgeAgents(bridgeUrl: string, authorization: string | null | undefined): Promise<BridgeAgentInfo[]> {
  const listed = await askBridge(bridgeUrl, '/agents', authorization);
  if (listed === undefined) throw new Error(`GET ${bridgeUrl}/agents answered 404`);
  return listed as BridgeAgentInfo[];
}

/** Answers with what `read` gives as JSON, or `502` when the bridge did not answer. */
async function answerFromBridge(response: ServerResponse, read: () => Promise<unknown>): Promise<void> {
  try {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(await read()));
  } catch (error) {
    response.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `The bridge did not answer: ${(error as Error).message}` }));
  }
}

/**
 * A fetch handler `(Request) => Promise<Response>`: mount it as a Next.js route
 * (`export const POST = handler`), in Hono (`app.post(path, (c) => handler(c.req.raw))`) or in Node
 * (below). The bridge's `/run` is a plain AG-UI endpoint, so CopilotKit's own `HttpAgent` is all
 * it needs: one per agent or workflow the bridge lists, `?agentId=` naming it (the demo server's
 * `demo` and its workflow `draft-and-send`, which suspends for a person; CopilotKit carries its
 * interrupt like an approval's). The list is read on each request, so an agent the bridge gains
 * is there without a restart.
 */
export function createCopilotKitHandler(bridgeUrl: string, { corsOrigins = DEV_ORIGINS }: RuntimeOptions = {}) {
  const agents = async ({ request }: { request: Request }) => {
    const listed = await listBridgeAgents(bridgeUrl, request.headers.get('authorization'));
    return Object.fromEntries(
      listed.map(({ id, description }) => [id, new HttpAgent({ url: `${bridgeUrl}/run?agentId=${encodeURIComponent(id)}`, description })]),
    );
  };
  // The cast is for the types only: CopilotKit 1.75 is typed against @ag-ui/client 0.0.59, whose
  // message content parts lack the `file` source that 1.0.0 (the bridge's version) added.
  const runtime = new CopilotRuntime({ agents: agents as unknown as AgentsConfig });
  // Single-route mode: one POST route taking `{ method: 'agent/run', params: { agentId }, body: RunAgentInput }`
  // (the frontend's `runtimeTransport: 'single'`; `useSingleEndpoint` on the React provider).
  // A page on another origin sends a preflight (`OPTIONS`) first: without `cors` it is answered 405.
  const cors = { origin: corsOrigins, allowHeaders: ['Content-Type', 'Authorization'], allowMethods: ['POST', 'OPTIONS'] };
  return createCopilotRuntimeHandler({ runtime, basePath: COPILOTKIT_PATH, mode: 'single-route', cors });
}

/** The bridge's list for the app's picker: id, name, kind and description of each; `502` when the bridge does not answer. */
function serveAgents(bridgeUrl: string, request: IncomingMessage, response: ServerResponse): Promise<void> {
  return answerFromBridge(response, async () => {
    const listed = await listBridgeAgents(bridgeUrl, request.headers.authorization);
    return listed.map(({ id, name, kind, description }) => ({ id, name, kind, description }));
  });
}

/**
 * A thread's AG-UI messages and state as the bridge stores them (`GET /threads/:id/messages?format=agui`,
 * `GET /threads/:id/state`), asked as the caller: `{ messages: [], state: {} }` for a thread not
 * stored yet; `502` when the bridge does not answer.
 */
function serveHistory(bridgeUrl: string, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://local');
  const thread = `/threads/${encodeURIComponent(decodeURIComponent(url.pathname.slice(THREADS_PATH.length)))}`;
  const agent = url.searchParams.get('agent');
  const query = agent ? `agentId=${encodeURIComponent(agent)}` : '';
  const read = (path: string) => askBridge(bridgeUrl, `${thread}/${path}`, request.headers.authorization);
  return answerFromBridge(response, async () => {
    const [messages, state] = await Promise.all([read(`messages?format=agui&${query}`), read(`state?${query}`)]);
    return { messages: messages ?? [], state: (state as { state?: unknown } | undefined)?.state ?? {} };
  });
}

/**
 * Serves the handler with node:http, and the built app at `/` when there is one; resolves once
 * listening (port 0 picks a free port).
 */
export function listen(bridgeUrl: string, port = 4000, hostname = '127.0.0.1', options: RuntimeOptions = {}): Promise<Server> {
  const runtime = createCopilotNodeHandler(createCopilotKitHandler(bridgeUrl, options));
  const staticDir = options.staticDir ?? (existsSync(BUILT_APP) ? BUILT_APP : undefined);
  const server = createServer((request, response) => {
    if (request.url === AGENTS_PATH && request.method === 'GET') return void serveAgents(bridgeUrl, request, response);
    if (request.url?.startsWith(THREADS_PATH) && request.method === 'GET') return void serveHistory(bridgeUrl, request, response);
    if (!staticDir || request.url?.startsWith(COPILOTKIT_PATH)) return void runtime(request, response);
    void serveFile(staticDir, request, response);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, hostname, () => resolve(server));
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const bridgeUrl = process.env.BRIDGE_URL ?? 'http://127.0.0.1:4111/agui';
  const corsOrigins = process.env.CORS_ORIGINS?.split(',')
    .map((origin) => origin.trim())
    .filter(Boolean);
  const server = await listen(bridgeUrl, Number(process.env.PORT ?? 4000), '127.0.0.1', { ...(corsOrigins && { corsOrigins }) });
  const { port } = server.address() as import('node:net').AddressInfo;
  console.log(`CopilotKit runtime on http://127.0.0.1:${port}${COPILOTKIT_PATH} -> ${bridgeUrl}`);
  if (existsSync(BUILT_APP)) console.log(`The React app on http://127.0.0.1:${port}/`);
}
