/**
 * `promise`, or a rejection after `ms`: a wait on a dependency that may hang (storage, Redis)
 * bounded, for a caller that goes on without the answer. A leaf: it imports nothing.
 */
export function withinMs<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
