// Everything a handler may use, built once per HTTP thread and handed to every request.
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from './config-types.js';
import { Router } from './router.js';
import { ROUTES } from './routes.js';
import { createPool } from '../db/pool.js';

export interface AppContext {
  config: Config;
  router: Router;
  log: Logger;
  db: pg.Pool;
}

export interface AppResources { databaseUrl: string; poolSize: number }

export function createAppContext(config: Config, resources: AppResources, log: Logger): AppContext {
  const db = createPool({ url: resources.databaseUrl, max: resources.poolSize, namespace: config.db.namespace, applicationName: 'portcullis' });
  db.on('error', (err) => log.warn({ err }, 'idle database connection failed'));
  return { config, router: new Router(ROUTES), log, db };
}

export async function closeAppContext(ctx: AppContext): Promise<void> {
  await ctx.db.end();
}
