/** Mastra's own server routes (`@mastra/hono`): the bench uses `POST /api/agents/demo/stream` (SSE of raw chunks). */
import { MastraServer } from '@mastra/hono';
import { Hono } from 'hono';
import { createBenchMastra, serveBench } from './shared.js';

const { mastra } = await createBenchMastra();
const app = new Hono();
await new MastraServer({ app, mastra }).init();
await serveBench(app.fetch);
