import { createTool } from '@mastra/core/tools';
import { z } from 'zod';

/** Cities the weather tool refuses, so that a failing server tool can be shown and tested. */
const UNKNOWN_CITIES = new Set(['atlantis']);

/**
 * Server tool: a deterministic forecast. `Atlantis` throws, to show a failing server tool.
 *
 * @example
 * await getWeather.execute({ city: 'Paris' }) // { city: 'Paris', tempC: 18, conditions: 'sunny' }
 */
export const getWeather = createTool({
  id: 'get_weather',
  description: 'Current weather for a city',
  inputSchema: z.object({ city: z.string().min(1) }),
  outputSchema: z.object({ city: z.string(), tempC: z.number(), conditions: z.string() }),
  execute: async ({ city }) => {
    if (UNKNOWN_CITIES.has(city.toLowerCase())) throw new Error(`no weather station in ${city}`);
    const seed = [...city].reduce((sum, ch) => sum + ch.charCodeAt(0), 0);
    return { city, tempC: 10 + (seed % 20), conditions: ['sunny', 'cloudy', 'rainy', 'windy'][seed % 4] };
  },
});

/** Server tool that needs a human's approval before it runs. It deletes nothing: it reports what it would do. */
export const deleteFile = createTool({
  id: 'delete_file',
  description: 'Delete a file (asks for approval first)',
  inputSchema: z.object({ path: z.string().min(1) }),
  requireApproval: true,
  execute: async ({ path }) => ({ deleted: path }),
});

/**
 * Background-eligible tool: takes `SLOW_TASK_MS` (default 2 s). Where Mastra's background tasks are
 * enabled it runs detached from the model turn and its lifecycle is streamed as activity events.
 */
export function createSlowTask(durationMs: number) {
  return createTool({
    id: 'slow_task',
    description: 'A slow job that may run in the background',
    inputSchema: z.object({ label: z.string() }),
    background: { enabled: true, defaultDisposition: 'deferred' },
    execute: async ({ label }) => {
      await new Promise((resolve) => setTimeout(resolve, durationMs));
      return { done: true, label, tookMs: durationMs };
    },
  });
}
