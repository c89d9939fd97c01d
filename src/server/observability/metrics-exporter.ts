// The Prometheus exporter (METRICS_EXPORTER=prometheus): serves the aggregated metrics of every HTTP
// thread, plus the supervisor's own process metrics, on OTEL_EXPORTER_PROMETHEUS_HOST:PORT at path /.
import http from 'node:http';
import { AggregatorRegistry, Gauge, Registry, collectDefaultMetrics, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import type { Logger } from 'pino';
import type { Config } from '../config/types.js';
import { VERSION } from '../version.js';

/** One registry's metrics as prom-client serialises them to JSON (what each HTTP thread sends). */
export type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];

export interface MetricsExporter {
  port: number;
  close(): Promise<void>;
}

export async function startMetricsExporter(
  config: Config['metrics'],
  collectThreads: () => Promise<MetricsJson[]>,
  log: Logger,
): Promise<MetricsExporter> {
  const own = new Registry();
  collectDefaultMetrics({ register: own });
  new Gauge({ name: 'gotrue_running', help: 'Whether the service is running', registers: [own] }).set(1);
  new Gauge({ name: 'auth_version_info', help: 'The build version', labelNames: ['auth_version'], registers: [own] }).set(
    { auth_version: VERSION },
    1,
  );

  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '/').split('?')[0] !== '/') {
      res.writeHead(404).end();
      return;
    }
    Promise.all([collectThreads(), own.getMetricsAsJSON()])
      .then(([threads, mine]) => AggregatorRegistry.aggregate([...threads, mine as MetricsJson]).metrics())
      .then((text) => {
        res.writeHead(200, { 'Content-Type': own.contentType }).end(text);
      })
      .catch((err) => {
        log.error({ err }, 'metrics collection failed');
        res.writeHead(500).end();
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.prometheusPort, config.prometheusHost, () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  log.info({ port, host: config.prometheusHost }, 'prometheus metrics exporter listening');
  return {
    port,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
