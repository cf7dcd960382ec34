/** This package: the bridge's Hono app (`POST /agui/run`, thread events) over the shared Mastra. */
import { createBridge } from '../../src/index.js';
import { createBenchMastra, serveBench } from './shared.js';

const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: (message: string) => console.error(message) };
const { mastra } = await createBenchMastra();
const bridge = createBridge({ logger: quiet });
await serveBench(bridge.app(mastra).fetch);
