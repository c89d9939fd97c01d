// The database a one-shot command (migrate, import, admin) works on: DATABASE_URL, or in the development
// setup the embedded server in DATA_DIR, started for the command and stopped after it, as `serve` would.
import type { Logger } from 'pino';
import { startEmbeddedPostgres } from '../db/embedded/server.js';
import type { Config } from './config/types.js';

export async function withCommandDatabase<T>(
  config: Config,
  log: Logger,
  use: (url: string) => Promise<T>,
  url = config.db.url,
): Promise<T> {
  const embedded = config.development ? await startEmbeddedPostgres({ dataDir: config.dataDir, log: (m) => log.debug(m) }) : null;
  try {
    return await use(embedded?.url ?? url);
  } finally {
    await embedded?.stop();
  }
}
