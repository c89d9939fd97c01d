// Request metrics of one HTTP thread (prom-client). Each thread keeps its own registry; the supervisor
// collects them as JSON and aggregates them for the exporter (metrics-exporter.ts), so one scrape sees
// the whole process.
import { Counter, Histogram, Registry, type MetricObjectWithValues, type MetricValue } from 'prom-client';

export interface RequestMetrics {
  observe(method: string, route: string, status: number, seconds: number): void;
  snapshot(): Promise<MetricObjectWithValues<MetricValue<string>>[]>;
}

/**
 * What each request pays for metrics nobody reads: nothing. prom-client resolves and hashes the label set
 * on every observation (a visible share of an HTTP thread's time, bench/README.md), so the
 * counters exist only when an exporter will collect them.
 */
export const NO_REQUEST_METRICS: RequestMetrics = { observe() {}, snapshot: () => Promise.resolve([]) };

/** The request metrics for this configuration: counted when the Prometheus exporter is on, else none. */
export function requestMetricsFor(config: { enabled: boolean; exporter: string }): RequestMetrics {
  return config.enabled && config.exporter === 'prometheus' ? createRequestMetrics() : NO_REQUEST_METRICS;
}

export function createRequestMetrics(): RequestMetrics {
  const registry = new Registry();
  const requests = new Counter({
    name: 'http_status_codes',
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
  // Label-bound children, cached: resolving a label set on every request costs more than counting.
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
    snapshot: () => registry.getMetricsAsJSON(),
  };
}
