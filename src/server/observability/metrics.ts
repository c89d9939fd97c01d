// Request and outcome metrics of one HTTP thread (prom-client). Each thread keeps its own registry; the
// supervisor collects them as JSON and aggregates them for the exporter (metrics-exporter.ts), so one
// scrape sees the whole process. Names follow Prometheus' rules (counters end in _total, units in the
// name), which `promtool check metrics` enforces; docs/observability.md#metrics lists them.
import { Counter, Gauge, Histogram, Registry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import { labelName, serverMetricAttributes, SERVER_METRIC_KEYS } from './http-semconv.js';

/** The grants counted as sign-ins (auth_sign_ins_total); refresh_token continues a session and is counted on its own. */
export const SIGN_IN_GRANTS: ReadonlySet<string> = new Set(['password', 'pkce', 'web3']);

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
  /** A sign-up's outcome (POST /signup): method email, phone or anonymous; `success` or the error_code. */
  signUp(method: string, outcome: string): void;
  /**
   * A mail or SMS send's outcome: channel email or sms; outcome sent, failed or timeout. `type`: a mail's
   * action type as the original names it (signup, recovery…), for its two counters.
   */
  sent(channel: string, outcome: string, type?: string): void;
  /** How long a checkout waited for a database connection (queued or connecting), in seconds. */
  dbAcquired(seconds: number): void;
  /** A request refused by the email send limit (RATE_LIMIT_EMAIL_SENT), by its route: the original's counter. */
  emailRateLimited(path: string): void;
  /**
   * A password hashed (`generate`) or compared with a stored hash (`compare`), when it was handed to a
   * crypto thread and when its answer came: the original's four counters, labelled with the algorithm
   * and its parameters (crypto/hash-metrics.ts), and a comparison's answer with `match`.
   */
  passwordHashing(operation: 'generate' | 'compare', stage: 'submitted' | 'completed', labels: HashLabels): void;
  snapshot(): Promise<MetricObjectWithValues<MetricValue<string>>[]>;
}

/** The labels of the original's password-hashing counters; each algorithm has its own subset. */
export type HashLabels = Partial<Record<(typeof HASH_LABELS)[number], string>>;
const HASH_LABELS = ['alg', 'v', 'm', 't', 'p', 'len', 'bcrypt_cost', 'n', 'r', 'match'] as const;

/**
 * What each request pays for metrics nobody reads: nothing. prom-client resolves and hashes the label set
 * on every observation (a visible share of an HTTP thread's time, bench/README.md), so the
 * counters exist only when an exporter will collect them.
 */
export const NO_REQUEST_METRICS: RequestMetrics = {
  observe() {},
  emailRateLimited() {},
  passwordHashing() {},
  signIn() {},
  refresh() {},
  rateLimited() {},
  signUp() {},
  sent() {},
  dbAcquired() {},
  snapshot: () => Promise.resolve([]),
};

/**
 * The request metrics for this configuration: counted when metrics are on, whichever exporter reads them
 * (both read the same registry: metrics-exporter.ts serves it, otlp-metrics.ts pushes it), else none.
 */
export function requestMetricsFor(config: { enabled: boolean }, db?: PoolCounts, thread = 0): RequestMetrics {
  return config.enabled ? createRequestMetrics(db, thread) : NO_REQUEST_METRICS;
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
  // The original's request histogram, as its HTTP instrumentation (OpenTelemetry's otelhttp) records it and
  // its Prometheus exporter names it: seconds, the semantic conventions' buckets and labels. Not its
  // server_address and server_port, which it takes from the Host header: a client could then make series
  // without end (docs/observability.md#metrics).
  const requestDuration = new Histogram({
    name: 'http_server_request_duration_seconds',
    help: 'Duration of HTTP server requests.',
    labelNames: SERVER_METRIC_KEYS.map(labelName),
    buckets: [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10],
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
  const signUps = labelled(
    new Counter({
      name: 'auth_sign_ups_total',
      help: 'Sign-ups by method (email, phone, anonymous) and outcome (success or the error_code)',
      labelNames: ['method', 'outcome'],
      registers: [registry],
    }),
  );
  const sends = labelled(
    new Counter({
      name: 'auth_deliveries_total',
      help: 'Mail and SMS sends by channel (email, sms) and outcome (sent, failed, timeout)',
      labelNames: ['channel', 'outcome'],
      registers: [registry],
    }),
  );
  // The original's two mail counters, kept under its names for its dashboards: every attempt, and failures.
  const mailOperations = labelled(
    new Counter({
      name: 'global_auth_email_send_operations_total',
      help: 'Number of email send operations',
      labelNames: ['type'],
      registers: [registry],
    }),
  );
  const mailErrors = labelled(
    new Counter({
      name: 'global_auth_email_send_errors_total',
      help: 'Number of email send errors',
      labelNames: ['type'],
      registers: [registry],
    }),
  );
  const emailLimited = labelled(
    new Counter({
      name: 'gotrue_email_rate_limit_counter_total',
      help: 'Number of times an email rate limit has been triggered',
      labelNames: ['path'],
      registers: [registry],
    }),
  );
  // The original's hashing counters, under the names its Prometheus exporter gives them (a sum gets _total).
  const hashing = {
    generate: {
      submitted: hashCounter('gotrue_generate_from_password_submitted_total', 'Number of submitted GenerateFromPassword hashing attempts'),
      completed: hashCounter('gotrue_generate_from_password_completed_total', 'Number of completed GenerateFromPassword hashing attempts'),
    },
    compare: {
      submitted: hashCounter(
        'gotrue_compare_hash_and_password_submitted_total',
        'Number of submitted CompareHashAndPassword hashing attempts',
      ),
      completed: hashCounter(
        'gotrue_compare_hash_and_password_completed_total',
        'Number of completed CompareHashAndPassword hashing attempts',
      ),
    },
  };
  function hashCounter(name: string, help: string) {
    // Each algorithm sets its own subset of the labels (prom-client takes a subset of the names).
    const count = labelled(new Counter({ name, help, labelNames: HASH_LABELS, registers: [registry] }));
    return (labels: HashLabels) => count(labels as Record<(typeof HASH_LABELS)[number], string>, JSON.stringify(labels));
  }
  // Not per thread: the supervisor sums the threads' buckets into one histogram.
  const acquire = new Histogram({
    name: 'auth_db_pool_acquire_seconds',
    help: 'Time a query or transaction waited for a database connection',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
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
  // Per method, route and status: the counter and the original's histogram, resolved once.
  const answered = new Map<string, { counter: ReturnType<typeof requests.labels>; original: ReturnType<typeof requestDuration.labels> }>();
  const timers = new Map<string, ReturnType<typeof duration.labels>>();
  return {
    observe(method, route, status, seconds) {
      const key = `${method} ${route}`;
      const countKey = `${key} ${status}`;
      let series = answered.get(countKey);
      if (!series) {
        series = {
          counter: requests.labels({ code: String(status), http_route: route, method }),
          original: requestDuration.labels(prometheusLabels(serverMetricAttributes(method, route, status))),
        };
        answered.set(countKey, series);
      }
      let timer = timers.get(key);
      if (!timer) timers.set(key, (timer = duration.labels({ http_route: route, method })));
      series.counter.inc();
      timer.observe(seconds);
      series.original.observe(seconds);
    },
    signIn: (method, outcome) => signIns({ method, outcome }, `${method} ${outcome}`),
    refresh: (outcome) => refreshes({ outcome }, outcome),
    rateLimited: (bucket) => refusals({ bucket }, bucket),
    signUp: (method, outcome) => signUps({ method, outcome }, `${method} ${outcome}`),
    sent(channel, outcome, type) {
      sends({ channel, outcome }, `${channel} ${outcome}`);
      if (type === undefined) return;
      mailOperations({ type }, type);
      if (outcome !== 'sent') mailErrors({ type }, type);
    },
    dbAcquired: (seconds) => acquire.observe(seconds),
    emailRateLimited: (path) => emailLimited({ path }, path),
    passwordHashing: (operation, stage, labels) => hashing[operation][stage](labels),
    snapshot: () => registry.getMetricsAsJSON(),
  };
}

const prometheusLabels = (attributes: Record<string, string>) =>
  Object.fromEntries(Object.entries(attributes).map(([key, value]) => [labelName(key), value]));
