// The work a request waits on — database statements, crypto-pool calls — noted while the request runs so
// that tracing.ts can export it as child spans of the request's span. The request's span is written when
// the request completes (request-record.ts), so children are kept as plain records until then; nothing
// here runs unless tracing is on (the HTTP server enters a request's scope only then).
import { AsyncLocalStorage } from 'node:async_hooks';

export interface ChildSpan {
  name: string;
  /** epoch milliseconds */
  start: number;
  end: number;
  attributes: Record<string, string>;
  failed: boolean;
}

const current = new AsyncLocalStorage<ChildSpan[]>();

/** Runs `fn` as one request: the child spans noted while it (and whatever it awaits) runs land in `spans`. */
export function withRequestSpans<T>(spans: ChildSpan[], fn: () => T): T {
  return current.run(spans, fn);
}

/** Starts a child span of the current request; returns what ends it, or undefined outside a request. */
export function startChildSpan(name: string, attributes: Record<string, string>): ((error?: Error) => void) | undefined {
  const spans = current.getStore();
  if (!spans) return undefined;
  const start = now();
  return (error) => {
    spans.push({ name, start, end: now(), attributes, failed: !!error });
  };
}

const now = () => performance.timeOrigin + performance.now();
