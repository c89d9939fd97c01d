// Request metrics of one HTTP thread (prom-client). Each thread keeps its own registry; the supervisor
// collects them as JSON and aggregates them for the exporter (metrics-exporter.ts), so one scrape sees
// the whole process.
import { Counter, Histogram, Registry, type MetricObjectWithValues, type MetricValue } from 'prom-client';

export interface RequestMetrics {
  observe(method: string, route: string, status: number, seconds: number): void;
  snapshot(): Promise<MetricObjectWithValues<MetricValue<string>>[]>;
}

export function createRequestMetrics(): RequestMetrics {
  const registry = new Registry();
  const requests = new Counter({ name: 'http_status_codes', help: 'HTTP responses by status code and route',
    labelNames: ['code', 'http_route', 'method'], registers: [registry] });
  const duration = new Histogram({ name: 'http_server_duration_seconds', help: 'Time to answer a request',
    labelNames: ['http_route', 'method'], buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5], registers: [registry] });
  return {
    observe(method, route, status, seconds) {
      requests.inc({ code: String(status), http_route: route, method });
      duration.observe({ http_route: route, method }, seconds);
    },
    snapshot: () => registry.getMetricsAsJSON() as Promise<MetricObjectWithValues<MetricValue<string>>[]>,
  };
}
