// Request and outcome metrics of one HTTP thread (prom-client). Each thread keeps its own registry; the
// supervisor collects them as JSON and aggregates them for the exporter (metrics-exporter.ts), so one
// scrape sees the whole process. Names follow Prometheus' rules (counters end in _total, units in the
// name), which `promtool check metrics` enforces; docs/architecture.md#observability lists them.
import { Counter, Gauge, Histogram, Registry, type MetricObjectWithValues, type MetricValue } from 'prom-client';

/** What the database pool gauges read, at scrape time: a pg Pool has these three counts. */
export interface PoolCounts {
  readonly totalCount: number;
  readonly idleCount: number;
  readonly waitingCount: number;
}

export interface RequestMetrics {
  observe(method: string, route: string, status: number, seconds: number): void;
  /** A sign-in grant's outcome: `success` or the refusal's error_code (a bounded set, errors.ts). */
  signIn(method: string, outcome: string): void;
  /** A refresh grant's outcome: rotated, reused_parent, reuse_detected, or the refusal's error_code. */
  refresh(outcome: string): void;
  /** A request refused by a per-client limit (limits/per-client.ts), by bucket. */
  rateLimited(bucket: string): void;
  snapshot(): Promise<MetricObjectWithValues<MetricValue<string>>[]>;
}

/**
 * What each request pays for metrics nobody reads: nothing. prom-client resolves and hashes the label set
 * on every observation (a visible share of an HTTP thread's time, bench/README.md), so the
 * counters exist only when an exporter will collect them.
 */
export const NO_REQUEST_METRICS: RequestMetrics = {
  observe() {},
  signIn() {},
  refresh() {},
  rateLimited() {},
  snapshot: () => Promise.resolve([]),
};

/** The request metrics for this configuration: counted when the Prometheus exporter is on, else none. */
export function requestMetricsFor(config: { enabled: boolean; exporter: string }, db?: PoolCounts, thread = 0): RequestMetrics {
  return config.enabled && config.exporter === 'prometheus' ? createRequestMetrics(db, thread) : NO_REQUEST_METRICS;
}

/** A counter with one label whose children are cached: resolving a label set costs more than counting. */
function labelled<L extends string>(counter: Counter<L>): (labels: Record<L, string>, key: string) => void {
  const children = new Map<string, ReturnType<Counter<L>['labels']>>();
  return (labels, key) => {
    let child = children.get(key);
    if (!child) children.set(key, (child = counter.labels(labels)));
    child.inc();
  };
}

export function createRequestMetrics(db?: PoolCounts, thread = 0): RequestMetrics {
  const registry = new Registry();
  // The original's counter, under the name its OpenTelemetry Prometheus exporter gives it (a monotonic
  // sum gets _total there), so dashboards built on the original keep working.
  const requests = new Counter({
    name: 'http_status_codes_total',
    help: 'HTTP responses by status code and route',
    labelNames: ['code', 'http_route', 'method'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_server_duration_seconds',
    help: 'Time to answer a request',
    labelNames: ['http_route', 'method'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const signIns = labelled(
    new Counter({
      name: 'auth_sign_ins_total',
      help: 'Sign-in grants by method and outcome (success or the error_code)',
      labelNames: ['method', 'outcome'],
      registers: [registry],
    }),
  );
  const refreshes = labelled(
    new Counter({
      name: 'auth_token_refreshes_total',
      help: 'Refresh grants by outcome (rotated, reused_parent, reuse_detected or the error_code)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
  );
  const refusals = labelled(
    new Counter({
      name: 'auth_rate_limit_refusals_total',
      help: 'Requests refused by a per-client rate limit, by bucket',
      labelNames: ['bucket'],
      registers: [registry],
    }),
  );
  if (db) {
    // Read when scraped (the supervisor asks each thread for its snapshot): nothing is paid per query.
    const labels = { thread: String(thread) };
    const gauge = (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['thread'],
        registers: [registry],
        collect() {
          this.set(labels, read());
        },
      });
    gauge('auth_db_pool_connections', 'Open database connections of an HTTP thread', () => db.totalCount);
    gauge('auth_db_pool_idle_connections', 'Idle database connections of an HTTP thread', () => db.idleCount);
    gauge('auth_db_pool_waiting_requests', 'Queries waiting for a database connection of an HTTP thread', () => db.waitingCount);
  }
  const counters = new Map<string, ReturnType<typeof requests.labels>>();
  const timers = new Map<string, ReturnType<typeof duration.labels>>();
  return {
    observe(method, route, status, seconds) {
      const key = `${method} ${route}`;
      const countKey = `${key} ${status}`;
      let counter = counters.get(countKey);
      if (!counter) counters.set(countKey, (counter = requests.labels({ code: String(status), http_route: route, method })));
      let timer = timers.get(key);
      if (!timer) timers.set(key, (timer = duration.labels({ http_route: route, method })));
      counter.inc();
      timer.observe(seconds);
    },
    signIn: (method, outcome) => signIns({ method, outcome }, `${method} ${outcome}`),
    refresh: (outcome) => refreshes({ outcome }, outcome),
    rateLimited: (bucket) => refusals({ bucket }, bucket),
    snapshot: () => registry.getMetricsAsJSON(),
  };
}
