import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, describe, expect, it } from 'vitest';
import { http, useTestBridge } from './support/server.js';
import { openSse } from './support/sse.js';

// The OpenAPI document is what a client is generated from: a client made by openapi-typescript from
// the served document reads the fields of real answers with their types, and the answers the
// bridge sends match the schemas the document gives them.

const b = useTestBridge();
const dir = mkdtempSync(join(tmpdir(), 'openapi-client-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Code a client would write against the generated types; each `@ts-expect-error` must be an error. */
const CLIENT = `
import type { paths, components } from './schema';

type Json<P extends keyof paths, M extends keyof paths[P], S extends number> = paths[P][M] extends { responses: infer R }
  ? S extends keyof R ? R[S] extends { content: { 'application/json': infer B } } ? B : never : never
  : never;

declare const created: Json<'/threads', 'post', 201>;
export const threadId: string = created.id;
export const title: string | undefined = created.title;
// @ts-expect-error a ThreadInfo has no such field
export const nothing = created.nope;

declare const sent: Json<'/threads/{threadId}/send-message', 'post', 202>;
export const action: 'wake' | 'deliver' | 'persist' | 'discard' | 'blocked' = sent.action;
export const signalId: string = sent.signalId;
export const runId: string | undefined = sent.runId;
// @ts-expect-error the action is one of Mastra's decisions, not any string
export const other: typeof sent.action = 'maybe';

declare const agents: Json<'/agents', 'get', 200>;
export const agentName: string = agents[0].name;

type Frame = components['schemas']['ThreadEvent'];
declare const frame: Frame;
export const eventType: string = frame.type;

type Params = paths['/threads/{threadId}/messages']['get']['parameters'];
export const query: NonNullable<Params['query']> = { format: 'agui', resourceId: 'alice' };
// @ts-expect-error format is mastra or agui
export const badQuery: NonNullable<Params['query']> = { format: 'xml' };
`;

/** Type-checks the generated schema and the client code together; answers the diagnostics. */
function typeCheck(schema: string): string[] {
  writeFileSync(join(dir, 'schema.ts'), schema);
  writeFileSync(join(dir, 'client.ts'), CLIENT);
  const program = ts.createProgram([join(dir, 'client.ts')], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    skipLibCheck: true,
  });
  return ts
    .getPreEmitDiagnostics(program)
    .map(
      (d) =>
        `${d.file ? `${d.file.fileName.slice(dir.length + 1)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1} ` : ''}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`,
    );
}

describe('a client generated with openapi-typescript from /agui/openapi.json', () => {
  it('type-checks code that reads .id of a created thread, .action of a send-message answer, and an event frame', async () => {
    const doc = (await http(`${b.base}/openapi.json`)).body;
    const schema = astToString(await openapiTS(doc));
    expect(typeCheck(schema)).toEqual([]);
  }, 60_000);

  it('the answers sent match the schemas the document gives them', async () => {
    const doc = (await http(`${b.base}/openapi.json`)).body;
    const ajv = new Ajv2020({ strict: false });
    ajv.addSchema({ $id: 'doc', components: doc.components });
    const answerOf = (path: string, method: string, status: number) => {
      const schema = doc.paths[path][method].responses[status].content['application/json'].schema;
      return ajv.compile({ ...schema, $defs: undefined, components: doc.components });
    };
    const resourceId = 'openapi-client';
    const created = await http(`${b.base}/threads`, { body: { resourceId, title: 'typed' } });
    const threadId: string = created.body.id;
    const checks: Array<[string, string, number, unknown]> = [
      ['/threads', 'post', 201, created.body],
      ['/threads/{threadId}', 'get', 200, (await http(`${b.base}/threads/${threadId}?resourceId=${resourceId}`)).body],
      ['/agents', 'get', 200, (await http(`${b.base}/agents`)).body],
    ];
    const events = await openSse(`${b.base}/threads/${threadId}/events?resourceId=${resourceId}`);
    await events.waitForComment('connected');
    const sent = await http(`${b.base}/threads/${threadId}/send-message`, { body: { resourceId, message: 'hello' } });
    checks.push(['/threads/{threadId}/send-message', 'post', 202, sent.body]);
    await events.waitForCount('RUN_FINISHED', 1);
    await events.close();
    checks.push(['/threads/{threadId}/messages', 'get', 200, (await http(`${b.base}/threads/${threadId}/messages?resourceId=${resourceId}&format=agui`)).body]);
    checks.push(['/threads/{threadId}/messages', 'get', 200, (await http(`${b.base}/threads/${threadId}/messages?resourceId=${resourceId}`)).body]);
    for (const [path, method, status, body] of checks) {
      const validate = answerOf(path, method, status);
      expect(validate(body), `${method} ${path} ${status}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
    const frame = ajv.compile({ ...doc.components.schemas.ThreadEvent, components: doc.components });
    for (const event of events.list) expect(frame(event), `${event.type}: ${JSON.stringify(frame.errors)}`).toBe(true);
    expect(frame({ type: 'NOT_AN_EVENT' })).toBe(false);
  });
});
