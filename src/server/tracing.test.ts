import { context, ROOT_CONTEXT, trace, TraceFlags, type Context, type ContextManager } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RequestContext } from '@mastra/core/request-context';
import { activeSpanSampled, mastraSpans } from './tracing.js';

/** A synchronous context manager: enough for `context.with` around a synchronous call. */
class StackContextManager implements ContextManager {
  private stack: Context[] = [];
  active = () => this.stack.at(-1) ?? ROOT_CONTEXT;
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    this.stack.push(ctx);
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.stack.pop();
    }
  }
  bind = <T>(_ctx: Context, target: T) => target;
  enable = () => this;
  disable = () => this;
}

/** Runs `fn` with a span of the given trace flags active. */
const within = <T>(traceFlags: TraceFlags, fn: () => T) =>
  context.with(trace.setSpanContext(ROOT_CONTEXT, { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags }), fn);

describe("activeSpanSampled (Mastra's sampler)", () => {
  beforeAll(() => context.setGlobalContextManager(new StackContextManager()));
  afterAll(() => context.disable());

  it('follows the sampling decision of the span active now', () => {
    expect(within(TraceFlags.SAMPLED, activeSpanSampled)).toBe(true);
    expect(within(TraceFlags.NONE, activeSpanSampled)).toBe(false);
  });

  it('samples where no span is active', () => {
    expect(activeSpanSampled()).toBe(true);
  });
});

describe("mastraSpans: Mastra's observability, given the sampler's decision", () => {
  beforeAll(() => context.setGlobalContextManager(new StackContextManager()));
  afterAll(() => context.disable());

  it('a run the sampler dropped gets no instance (Mastra builds nothing for it); a kept run gets one, for the whole run', async () => {
    const observability = (await mastraSpans('on'))!;
    const dropped = new RequestContext();
    const kept = new RequestContext();
    expect(within(TraceFlags.NONE, () => observability.getSelectedInstance({ requestContext: dropped }))).toBeUndefined();
    expect(within(TraceFlags.SAMPLED, () => observability.getSelectedInstance({ requestContext: kept }))).toBeDefined();
    // Later in each run, where no span of it is active, the run's first answer holds.
    expect(observability.getSelectedInstance({ requestContext: dropped })).toBeUndefined();
    expect(within(TraceFlags.NONE, () => observability.getSelectedInstance({ requestContext: kept }))).toBeDefined();
    await observability.shutdown();
  });
});
