import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

// A small OpenAI-compatible server for tests: `POST /v1/responses` with `stream: true`, the API
// Mastra's `openai/<model>` uses (through the AI SDK's OpenAI provider), answering with the
// Responses API's server-sent events: a text in deltas, or a function call with its arguments
// in pieces; or an HTTP error with OpenAI's error body. What to answer is the test's `script`.

/** One input item of a Responses API request, as the provider sends it (a message, a call, a call's output…). */
export interface InputItem {
  type?: string;
  role?: string;
  content?: string | Array<{ type: string; text?: string }>;
  call_id?: string;
  output?: unknown;
  [key: string]: unknown;
}

export interface ModelRequest {
  headers: IncomingHttpHeaders;
  body: { model: string; stream?: boolean; input: InputItem[]; tools?: Array<{ type: string; name?: string }> };
  /** The text of the last user message. */
  lastUserText: string;
  /** The outputs of function calls sent back since the last user message, by call id. */
  toolOutputs: Map<string, unknown>;
}

export type ModelReply =
  { text: string } | { call: { name: string; args: Record<string, unknown> } } | { status: number; error: { message: string; type: string; code: string } };

export interface FakeOpenAI {
  /** The base URL to give as `OPENAI_BASE_URL` (ends in `/v1`). */
  baseUrl: string;
  /** Every request received, in order. */
  requests: ModelRequest[];
  close(): Promise<void>;
}

/**
 * Starts the server on a free port of 127.0.0.1.
 *
 * @example
 * const model = await startFakeOpenAI((request) => ({ text: `You said: ${request.lastUserText}` }));
 * // MODEL=openai/gpt-test OPENAI_BASE_URL=${model.baseUrl} OPENAI_API_KEY=test
 */
export async function startFakeOpenAI(script: (request: ModelRequest) => ModelReply): Promise<FakeOpenAI> {
  const requests: ModelRequest[] = [];
  let responses = 0;
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/responses') {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}`, type: 'invalid_request_error', code: 'not_found' } }));
        return;
      }
      const body = JSON.parse(raw) as ModelRequest['body'];
      const request = { headers: req.headers, body, ...readInput(body.input) };
      requests.push(request);
      const reply = script(request);
      if ('status' in reply) {
        res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { ...reply.error, param: null } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const id = `resp_${++responses}`;
      for (const event of streamOf(id, body.model, reply)) res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function readInput(input: InputItem[]): Pick<ModelRequest, 'lastUserText' | 'toolOutputs'> {
  let lastUser = -1;
  input.forEach((item, i) => {
    if (item.role === 'user') lastUser = i;
  });
  const content = input[lastUser]?.content ?? '';
  const lastUserText = typeof content === 'string' ? content : content.map((part) => part.text ?? '').join('');
  const toolOutputs = new Map<string, unknown>();
  for (const item of input.slice(lastUser + 1)) if (item.type === 'function_call_output' && item.call_id) toolOutputs.set(item.call_id, item.output);
  return { lastUserText, toolOutputs };
}

/** One server-sent event of the Responses API. */
type ResponseEvent = Record<string, unknown> & { type: string };

/** The Responses API's events for one reply, as OpenAI streams them (sequence numbers included). */
function streamOf(id: string, model: string, reply: Exclude<ModelReply, { status: number }>): ResponseEvent[] {
  const events: ResponseEvent[] = [];
  const usage = { input_tokens: 12, output_tokens: 7, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } };
  events.push({ type: 'response.created', response: { id, object: 'response', created_at: Math.floor(Date.now() / 1000), model, status: 'in_progress' } });
  if ('text' in reply) {
    const item = { type: 'message', id: `msg_${id}`, role: 'assistant', status: 'in_progress', content: [] };
    events.push({ type: 'response.output_item.added', output_index: 0, item });
    events.push({
      type: 'response.content_part.added',
      item_id: item.id,
      output_index: 0,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [] },
    });
    for (const delta of reply.text.match(/\S+\s*/g) ?? [])
      events.push({ type: 'response.output_text.delta', item_id: item.id, output_index: 0, content_index: 0, delta, logprobs: [] });
    events.push({ type: 'response.output_text.done', item_id: item.id, output_index: 0, content_index: 0, text: reply.text });
    events.push({
      type: 'response.output_item.done',
      output_index: 0,
      item: { ...item, status: 'completed', content: [{ type: 'output_text', text: reply.text, annotations: [] }] },
    });
  } else {
    const args = JSON.stringify(reply.call.args);
    const item = { type: 'function_call', id: `fc_${id}`, call_id: `call_${id}`, name: reply.call.name, arguments: '', status: 'in_progress' };
    events.push({ type: 'response.output_item.added', output_index: 0, item });
    for (let at = 0; at < args.length; at += 8)
      events.push({ type: 'response.function_call_arguments.delta', item_id: item.id, output_index: 0, delta: args.slice(at, at + 8) });
    events.push({ type: 'response.function_call_arguments.done', item_id: item.id, output_index: 0, arguments: args });
    events.push({ type: 'response.output_item.done', output_index: 0, item: { ...item, arguments: args, status: 'completed' } });
  }
  events.push({
    type: 'response.completed',
    response: { id, object: 'response', created_at: Math.floor(Date.now() / 1000), model, status: 'completed', incomplete_details: null, usage },
  });
  return events.map((event, i) => ({ ...event, sequence_number: i }));
}
