// A wait with a bound, for work whose failure and lateness mean the same to the caller (a stop that must
// not hang on an exporter, a resolver that never answers): the work's value, or `fallback` when it fails or
// has not settled within `ms`. The work itself goes on; its late result is dropped.
export function settledWithin<T, F>(work: Promise<T>, ms: number, fallback: F): Promise<T | F> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<F>((resolve) => (timer = setTimeout(() => resolve(fallback), ms)));
  return Promise.race([work.catch(() => fallback), late]).finally(() => clearTimeout(timer));
}
