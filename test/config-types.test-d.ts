import { describe, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import type { BridgeConfig, BridgeConfigSchema } from '../src/config.js';

describe('BridgeConfig', () => {
  it('is what BridgeConfigSchema reads, option for option (the interface carries the docs an editor shows)', () => {
    expectTypeOf<BridgeConfig>().toEqualTypeOf<z.input<typeof BridgeConfigSchema>>();
  });
});
