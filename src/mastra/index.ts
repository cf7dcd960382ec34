/**
 * The one door into `@mastra/core`: every call the bridge makes into Mastra (its agents, runs,
 * signals, memory, leases, workflows, the instance itself) is a function here, typed in the
 * bridge's own terms, with the casts Mastra's generic types need kept inside this folder. The rest
 * of `src/` imports Mastra's *types* freely, but calls Mastra only through this index
 * (`test/architecture.test.ts` fails otherwise).
 */
export * from './memory.js';
export * from './registry.js';
export * from './runs.js';
export * from './signals.js';
export * from './workflows.js';
export * from './schedules.js';
