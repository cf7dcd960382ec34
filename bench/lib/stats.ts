/** Small statistics helpers for the bench: medians, percentiles, number formatting. */

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Linear-interpolated percentile (`p` in 0–100); `NaN` for no values. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return sorted[low] + (sorted[high] - sorted[low]) * (rank - low);
}

/** `1234567` → `1,234,567`; small values keep `digits` decimals. */
export function formatNumber(value: number, digits = 0): string {
  if (!Number.isFinite(value)) return 'n/a';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function formatMs(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  return value < 10 ? `${value.toFixed(2)} ms` : `${value.toFixed(1)} ms`;
}

/** `1.23×`; budget lines pass `digits = 3`, so that a ratio just under its line never reads as on it. */
export function formatRatio(value: number, digits = 2): string {
  return Number.isFinite(value) ? `${value.toFixed(digits)}×` : 'n/a';
}
