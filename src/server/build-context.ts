// Builds the context (src/server/context.ts) once per HTTP thread, and closes what it opened.
import { configureAuditTrail } from '../db/audit-log.js';
import type { Logger } from 'pino';
import type { AppContext, AppResources } from './context.js';
import type { Config } from './config/types.js';
import { createPool } from '../db/pool.js';
import type { PoolAdvisorOptions } from '../db/pool-advisor.js';
import { connectCryptoPool } from './crypto/pool.js';
import { countingHashes } from './crypto/hash-metrics.js';
import { createJwtService } from './auth/jwt.js';
import { createMailer } from './delivery/mail/mailer.js';
import { createSmsSender } from './delivery/sms/index.js';
import { createRedirectCheck } from './http/redirect-target.js';
import { NO_REQUEST_METRICS, requestMetricsFor, type RequestMetrics } from './observability/metrics.js';
import { startChildSpan } from './observability/request-spans.js';
import { createTracing } from './observability/tracing.js';
import { statementLogger } from './observability/sql-log.js';
import { componentLogger } from './observability/log.js';
import { createSendTiming } from './delivery/send-timing.js';
import { createSendingSlots } from './delivery/sending-slots.js';
import { createPwnedPasswords } from './users/pwned-passwords.js';

export async function createAppContext(config: Config, resources: AppResources, log: Logger): Promise<AppContext> {
  configureAuditTrail({ log, toDatabase: !config.auditLog.disablePostgres });
  let metrics: RequestMetrics = NO_REQUEST_METRICS;
  const db = createPool({
    url: resources.databaseUrl,
    max: resources.poolSize,
    maxIdle: resources.maxIdle,
    namespace: config.db.namespace,
    applicationName: 'portcullis',
    acquireTimeoutMs: config.db.acquireTimeoutSeconds * 1000,
    statementTimeoutMs: config.db.statementTimeoutSeconds * 1000,
    idleInTransactionTimeoutMs: config.db.idleInTransactionTimeoutSeconds * 1000,
    idleTimeoutMs: config.db.connMaxIdleTimeSeconds * 1000,
    maxLifetimeSeconds: config.db.connMaxLifetimeSeconds,
    maxWaiting: resources.poolSize * config.db.poolWaitersPerConnection,
    onConnectionError: (err) => log.warn({ err }, 'database connection failed'),
    onAcquired: config.metrics.enabled ? (seconds) => metrics.dbAcquired(seconds) : undefined,
    advisor: config.db.advisor.enabled ? poolAdvisor(config, log) : undefined,
    traceStatement: config.tracing.enabled ? (statement) => startChildSpan(`db ${statement}`, DB_ATTRIBUTES(statement)) : undefined,
    logStatement: statementLogger(log, config.log.sql),
    preparedStatements: config.db.preparedStatements,
  });
  metrics = requestMetricsFor(config.metrics, db, resources.index);
  return {
    config,
    log,
    db,
    hasher: config.metrics.enabled
      ? countingHashes(connectCryptoPool(resources.cryptoPort, config.password.hash), metrics, config.password.hash)
      : connectCryptoPool(resources.cryptoPort, config.password.hash),
    jwt: createJwtService(config.jwt),
    mailer: createMailer(config, log),
    sms: createSmsSender(config.sms, config.external.httpTimeoutSeconds, log, { development: config.development }),
    redirect: createRedirectCheck(config),
    metrics,
    sendTiming: createSendTiming(),
    sendingSlots: createSendingSlots({
      poolSize: resources.poolSize,
      maxWaiting: resources.poolSize * config.db.poolWaitersPerConnection,
      timeoutMs: config.db.acquireTimeoutSeconds * 1000,
    }),
    hookSlots: createSendingSlots({
      poolSize: resources.poolSize,
      maxWaiting: resources.poolSize * config.db.poolWaitersPerConnection,
      timeoutMs: config.db.acquireTimeoutSeconds * 1000,
    }),
    pwned: config.password.hibp.enabled ? createPwnedPasswords(config.password.hibp) : null,
    tracing: await createTracing(config, log, resources.traceExportFailing),
  };
}

/** The original's advice, its wording and fields, from each HTTP thread about its own pool. */
const poolAdvisor = (config: Config, log: Logger): PoolAdvisorOptions => {
  const advisorLog = componentLogger(log, 'db.advisor');
  return {
    samplingMs: config.db.advisor.samplingIntervalSeconds * 1000,
    observationMs: config.db.advisor.observationIntervalSeconds * 1000,
    advise: (advice) =>
      advisorLog.warn(
        {
          long_wait_duration_samples: advice.longWaitDurationSamples,
          over_2_waiting_samples: advice.over2WaitingSamples,
        },
        'Suboptimal database connection pool settings detected! Consider doubling the max DB pool size configuration',
      ),
  };
};

/** OpenTelemetry's database attributes: the system and the statement's name, never its text or values. */
const DB_ATTRIBUTES = (statement: string) => ({ 'db.system': 'postgresql', 'db.operation': statement });

export async function closeAppContext(ctx: AppContext): Promise<void> {
  await Promise.all([ctx.db.end(), ctx.mailer.close(), ctx.tracing.shutdown()]);
}
