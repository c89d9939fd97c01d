// Everything a handler may use, built once per HTTP thread and handed to every request.
import type { MessagePort } from 'node:worker_threads';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from './config-types.js';
import { Router } from './router.js';
import { ROUTES } from './routes.js';
import { createPool } from '../db/pool.js';
import { connectCryptoPool, type PasswordHasher } from './crypto.js';
import { createJwtService, type JwtService } from './jwt.js';
import { createMailer, type Mailer } from './mailer.js';
import { createSmsSender, type SmsSender } from './sms/index.js';
import { createRedirectCheck, type RedirectCheck } from './redirect.js';
import { requestMetricsFor, type RequestMetrics } from './metrics.js';
import { createTracing, type Tracing } from './tracing.js';

export interface AppContext {
  config: Config;
  router: Router;
  log: Logger;
  db: pg.Pool;
  hasher: PasswordHasher;
  jwt: JwtService;
  mailer: Mailer;
  /** null when no SMS gateway is configured (and not in development) */
  sms: SmsSender | null;
  /** the validated redirect target for a requested redirect_to */
  redirect: RedirectCheck;
  metrics: RequestMetrics;
  tracing: Tracing;
}

export interface AppResources { databaseUrl: string; poolSize: number; cryptoPort: MessagePort }

export async function createAppContext(config: Config, resources: AppResources, log: Logger): Promise<AppContext> {
  const db = createPool({ url: resources.databaseUrl, max: resources.poolSize, namespace: config.db.namespace,
    applicationName: 'portcullis',
    acquireTimeoutMs: config.db.acquireTimeoutSeconds * 1000,
    statementTimeoutMs: config.db.statementTimeoutSeconds * 1000,
    idleInTransactionTimeoutMs: config.db.idleInTransactionTimeoutSeconds * 1000,
    maxWaiting: resources.poolSize * config.db.poolWaitersPerConnection,
    onConnectionError: (err) => log.warn({ err }, 'database connection failed') });
  return {
    config, log, db,
    router: new Router(ROUTES),
    hasher: connectCryptoPool(resources.cryptoPort, config.password.hash),
    jwt: createJwtService(config.jwt),
    mailer: createMailer(config, log),
    sms: createSmsSender(config.sms, log, { development: config.development }),
    redirect: createRedirectCheck(config),
    metrics: requestMetricsFor(config.metrics),
    tracing: await createTracing(config),
  };
}

export async function closeAppContext(ctx: AppContext): Promise<void> {
  await Promise.all([ctx.db.end(), ctx.mailer.close(), ctx.tracing.shutdown()]);
}
