// The Prometheus exporter (METRICS_EXPORTER=prometheus): serves the aggregated metrics of every HTTP
// thread, plus the supervisor's own (process, crypto pool), on OTEL_EXPORTER_PROMETHEUS_HOST:PORT at
// `/` (the original's path) and `/metrics` (what a scrape config expects by default).
import semver from 'semver';
import http from 'node:http';
import {
  AggregatorRegistry,
  Counter,
  Gauge,
  Registry,
  collectDefaultMetrics,
  type MetricObjectWithValues,
  type MetricValue,
} from 'prom-client';
import type { Logger } from 'pino';
import type { Config } from '../config/types.js';
import type { CryptoQueueStats } from '../crypto/admission.js';
import { VERSION } from '../version.js';

/** One registry's metrics as prom-client serialises them to JSON (what each HTTP thread sends). */
export type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];

export interface MetricsExporter {
  port: number;
  close(): Promise<void>;
}

/**
 * Every metric of the process in one registry, gathered afresh on each call: what both exporters read.
 * `observedCounters` names the counters read from a running total when collected rather than incremented as
 * things happen (the OTLP exporter's temporality tells them apart, otlp-temporality.ts).
 */
export type MetricsSource = (() => Promise<Registry>) & { observedCounters?: ReadonlySet<string> };

const PATHS: ReadonlySet<string> = new Set(['/', '/metrics']);

/** The supervisor's own metrics (process, crypto pool, cleanup) plus every HTTP thread's, aggregated per call. */
export function createMetricsSource(
  collectThreads: () => Promise<MetricsJson[]>,
  cryptoStats?: () => CryptoQueueStats,
  cleanupTotals?: () => Partial<Record<string, number>>,
): MetricsSource {
  const own = new Registry();
  collectDefaultMetrics({ register: own });
  // The original's names, kept for its dashboards: both are gauges and valid as they are.
  new Gauge({ name: 'gotrue_running', help: 'Whether the service is running', registers: [own] }).set(1);
  new Gauge({ name: 'auth_version_info', help: 'The build version', labelNames: ['auth_version'], registers: [own] }).set(
    { auth_version: VERSION },
    1,
  );
  // The original's version gauges, one per part of the build's version (an "rc.N" pre-release's N as rc).
  for (const [part, value] of Object.entries(versionParts(VERSION))) {
    new Gauge({ name: `global_auth_version_${part}`, help: `Set to this auth servers ${part} version number.`, registers: [own] }).set(
      value,
    );
  }
  if (cryptoStats) registerCryptoPoolMetrics(own, cryptoStats);
  if (cleanupTotals) registerCleanupMetrics(own, cleanupTotals);
  const source = () =>
    Promise.all([collectThreads(), own.getMetricsAsJSON()]).then(([threads, mine]) =>
      AggregatorRegistry.aggregate([...threads, mine as MetricsJson].map(withGaugeNamesFixed)),
    );
  // The supervisor's own counters (process CPU, crypto pool, cleanup) are all read from running totals;
  // the HTTP threads' are incremented per request.
  const observedCounters = new Set(own.getMetricsAsArray().flatMap((m) => (m instanceof Counter ? [m.name] : [])));
  return Object.assign(source, { observedCounters }) as MetricsSource;
}

export async function startMetricsExporter(config: Config['metrics'], source: MetricsSource, log: Logger): Promise<MetricsExporter> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || !PATHS.has((req.url ?? '/').split('?')[0])) {
      res.writeHead(404).end();
      return;
    }
    source()
      .then(async (registry) => ({ text: await registry.metrics(), type: registry.contentType }))
      .then(({ text, type }) => {
        res.writeHead(200, { 'Content-Type': type }).end(text);
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

/**
 * prom-client's default metrics name three gauges `nodejs_active_*_total`, which promtool rejects (only a
 * counter may end in _total): served without the suffix. Nobody's dashboard depends on the original
 * names here, the original being a Go service.
 */
function withGaugeNamesFixed(metrics: MetricsJson): MetricsJson {
  // prom-client types `type` as a numeric enum, but its JSON holds the type's name ('gauge').
  return metrics.map((m) =>
    (m.type as unknown as string) === 'gauge' && m.name.endsWith('_total') ? { ...m, name: m.name.slice(0, -'_total'.length) } : m,
  );
}

/** The crypto pool's admission queue (crypto/admission.ts), read when scraped: nothing is paid per hash. */
function registerCryptoPoolMetrics(registry: Registry, stats: () => CryptoQueueStats): void {
  const gauge = (name: string, help: string, read: (s: CryptoQueueStats) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read(stats()));
      },
    });
  // A counter read from a running total: reset, then set to the total (prom-client counters only add).
  const counter = (name: string, help: string, read: (s: CryptoQueueStats) => number) =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(read(stats()));
      },
    });
  gauge('auth_crypto_pool_running_tasks', 'Password hashes running on the crypto pool', (s) => s.running);
  gauge('auth_crypto_pool_queued_tasks', 'Password hashes waiting for a crypto thread', (s) => s.queued);
  gauge('auth_crypto_pool_queue_limit_tasks', 'How many hashes may wait before more are refused', (s) => s.bound);
  counter('auth_crypto_pool_completed_tasks_total', 'Password hashes run to completion', (s) => s.completed);
  counter('auth_crypto_pool_refused_tasks_total', 'Password hashes refused because the queue was full', (s) => s.refused);
  counter('auth_crypto_pool_dropped_tasks_total', 'Queued hashes dropped because their request gave up', (s) => s.dropped);
  counter('auth_crypto_pool_wait_seconds_total', 'Time hashes spent waiting for a crypto thread', (s) => s.waitedMs / 1000);
  counter('auth_crypto_pool_run_seconds_total', 'Time hashes spent running', (s) => s.ranMs / 1000);
}

/**
 * Rows the background cleanup removed, by table (cleanup/loop.ts), read when scraped. The original's
 * name for its cleanup counter, so its dashboards keep working; the table label is ours.
 */
function registerCleanupMetrics(registry: Registry, totals: () => Partial<Record<string, number>>): void {
  new Counter({
    name: 'gotrue_cleanup_affected_rows_total',
    help: 'Rows removed by the background database cleanup, by table',
    labelNames: ['table'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [table, count] of Object.entries(totals())) this.inc({ table }, count ?? 0);
    },
  });
}

/** major.minor.patch[-rc.N] as numbers, 0 for a part the version does not have (semver parses it). */
export function versionParts(version: string): Record<'major' | 'minor' | 'patch' | 'rc', number> {
  const parsed = semver.parse(version);
  if (!parsed) return { major: 0, minor: 0, patch: 0, rc: 0 };
  const [tag, number] = parsed.prerelease;
  return { major: parsed.major, minor: parsed.minor, patch: parsed.patch, rc: tag === 'rc' && typeof number === 'number' ? number : 0 };
}
