/**
 * Concurrent holders per key and in total (open streams, running runs), in this process.
 * `acquire` answers a release function, or which cap is full; releasing twice is harmless.
 */
export class Slots {
  private readonly byKey = new Map<string, number>();
  private total = 0;

  constructor(private readonly caps: { perKey?: number; total?: number }) {}

  acquire(key: string): (() => void) | 'perKey' | 'total' {
    const held = this.byKey.get(key) ?? 0;
    if (this.caps.total !== undefined && this.total >= this.caps.total) return 'total';
    if (this.caps.perKey !== undefined && held >= this.caps.perKey) return 'perKey';
    this.byKey.set(key, held + 1);
    this.total++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total--;
      const left = (this.byKey.get(key) ?? 1) - 1;
      if (left > 0) this.byKey.set(key, left);
      else this.byKey.delete(key);
    };
  }

  /** Held slots: of `key`, or in total. */
  held(key?: string): number {
    return key === undefined ? this.total : (this.byKey.get(key) ?? 0);
  }
}
