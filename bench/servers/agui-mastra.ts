/**
 * What a user would otherwise write: `@ag-ui/mastra`'s `MastraAgent` with `@ag-ui/encoder` behind
 * a Hono route, as in the notes' recipe (`stream()` from hono/streaming, input validated with
 * `RunAgentInputSchema`, errors caught and sent as `RUN_ERROR`).
 */
import { EventType, type BaseEvent, type RunAgentInput } from '@ag-ui/core';
import { RunAgentInputSchema } from '@ag-ui/core/schemas';
import { EventEncoder } from '@ag-ui/encoder';
import type { Agent } from '@mastra/core/agent';
import { Hono } from 'hono';
import { stream } from 'hono/streaming';
import { BENCH_RESOURCE, createBenchMastra, serveBench } from './shared.js';

interface MastraAgentLike {
  run(input: RunAgentInput): { subscribe(observer: { next(event: BaseEvent): void; error(error: unknown): void; complete(): void }): unknown };
}
type MastraAgentClass = new (config: { agent: Agent; resourceId?: string }) => MastraAgentLike;

// Installed in bench/node_modules only (`npm --prefix bench ci`): a computed specifier keeps the
// root type check, which runs where that folder is absent, from resolving it.
const specifier = '@ag-ui/mastra';
const { MastraAgent } = (await import(specifier)) as { MastraAgent: MastraAgentClass };

const { demo } = await createBenchMastra();
const app = new Hono();
app.post('/agent', async (c) => {
  const input = RunAgentInputSchema.parse(await c.req.json()) as RunAgentInput;
  const encoder = new EventEncoder();
  const agent = new MastraAgent({ agent: demo, resourceId: BENCH_RESOURCE });
  c.header('Content-Type', encoder.getContentType());
  c.header('Cache-Control', 'no-cache');
  return stream(
    c,
    (s) =>
      new Promise<void>((resolve) => {
        agent.run(input).subscribe({
          next: (event) => void s.write(encoder.encodeSSE(event as never)),
          error: (error) => {
            void s.write(encoder.encodeSSE({ type: EventType.RUN_ERROR, message: String(error) } as never));
            resolve();
          },
          complete: () => resolve(),
        });
      }),
  );
});
await serveBench(app.fetch);
