// The `portcullis` command: serve (default), migrate, version, keys generate, token.
import { loadConfig, ConfigError, type Config } from './config/load.js';
import { createLogger } from './observability/log.js';
import { startService } from './service.js';
import { migrate } from '../db/migrate.js';
import { startEmbeddedPostgres } from '../db/embedded/server.js';
import { VERSION } from './version.js';
import { keysCommand, tokenCommand } from './cli-keys.js';

const USAGE = 'usage: portcullis [serve | migrate | version | keys generate [--alg ES256] | token --role service_role|anon [--exp 10y]]';

async function main(command = 'serve', args: string[] = []): Promise<number> {
  if (command === 'version') {
    console.log(VERSION);
    return 0;
  }
  if (command === 'keys') return keysCommand(args);
  if (command !== 'serve' && command !== 'migrate' && command !== 'token') {
    console.error(USAGE);
    return 2;
  }
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(`portcullis: ${err.message}`);
    return 1;
  }
  if (command === 'token') return tokenCommand(config, args);
  const log = createLogger(config.log);
  if (command === 'migrate') return runMigrate(config, log);

  // Signals are caught from the start: one arriving while the threads are still starting stops the
  // service as soon as it is up, instead of killing the process and orphaning the embedded database.
  const stopRequested = new Promise<string>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM')).once('SIGINT', () => resolve('SIGINT'));
  });
  const service = await startService(config, log);
  const signal = await stopRequested;
  log.info({ signal }, 'draining');
  await service.stop().catch((err) => log.error({ err }, 'unclean stop'));
  return 0;
}

async function runMigrate(config: Config, log: ReturnType<typeof createLogger>): Promise<number> {
  const embedded = config.development ? await startEmbeddedPostgres({ dataDir: config.dataDir, log: (m) => log.debug(m) }) : null;
  try {
    const { applied } = await migrate(embedded?.url ?? config.db.url, config.db.namespace, (m) => log.info(m));
    log.info({ applied, namespace: config.db.namespace }, 'migrations complete');
    return 0;
  } finally {
    await embedded?.stop();
  }
}

main(process.argv[2], process.argv.slice(3)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    console.error('portcullis: failed to start:', err instanceof Error ? err.message : err);
    process.exitCode = 1;
  },
);
