// The `portcullis` command: serve (default), migrate [--dry-run], import, version, keys generate, token,
// admin createuser|deleteuser;
// each takes the original's -c/--config FILE and -d/--config-dir DIR (cli-flags.ts).
import { configSources, loadFromSources, ConfigError, type Config, type ConfigSources } from './config/load.js';
import { parseCommandLine } from './cli-flags.js';
import { createLogger } from './observability/log.js';
import { startService } from './service.js';
import { migrate } from '../db/migrate.js';
import { withCommandDatabase } from './cli-database.js';
import { VERSION } from './version.js';
import { keysCommand, tokenCommand } from './cli-keys.js';
import { appliedSchemaVersion, knownSchemaVersion } from '../db/schema-version.js';
import { developmentBanner } from './development-banner.js';
import { prettyLogsWanted } from './observability/log.js';
import { importCommand } from './cli-import.js';
import { adminCommand } from './cli-admin.js';
import { useOutboundProxy } from './outbound-proxy/active.js';
import { secretBox } from './mfa/encryption.js';

const USAGE =
  'usage: portcullis [-c FILE] [-d DIR] [serve | migrate [--dry-run] | import (--file users.jsonl | --from-database URL) | version | keys generate [--alg ES256] | token --role service_role|anon [--exp 10y] | admin createuser EMAIL PASSWORD [ROLE] [--confirm] [--admin] [-a AUD] | admin deleteuser EMAIL|ID [-a AUD]]';

async function main(argv: string[]): Promise<number> {
  const line = parseCommandLine(argv);
  if (line instanceof Error) {
    console.error(`portcullis: ${line.message}\n${USAGE}`);
    return 2;
  }
  const { command = 'serve', args } = line;
  if (command === 'keys') return keysCommand(args);
  let sources: ConfigSources;
  try {
    sources = configSources({ configFile: line.configFile, configDir: line.configDir });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(`portcullis: ${err.message}`);
    return 1;
  }
  if (command === 'version') return versionCommand(sources);
  if (!['serve', 'migrate', 'token', 'import', 'admin'].includes(command) || (command === 'migrate' && !migrateArgsValid(args))) {
    console.error(USAGE);
    return 2;
  }
  let config: Config;
  try {
    // A migration job needs the database settings only, not SITE_URL or JWT_SECRET.
    config = loadFromSources(sources, { only: command === 'migrate' ? 'database' : undefined });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(`portcullis: ${err.message}`);
    return 1;
  }
  // The commands that may call out themselves (KMS signing, the admin command's hooks), as the HTTP threads do.
  if (command === 'token' || command === 'admin') await useOutboundProxy(config.outbound);
  if (command === 'token') return tokenCommand(config, args);
  const log = createLogger(config.log, {}, { pretty: prettyLogsWanted(config, process.stdout.isTTY === true) });
  if (command === 'migrate') return runMigrate(config, log, args.includes('--dry-run'));
  if (command === 'import') return importCommand(config, log, args);
  if (command === 'admin') return adminCommand(config, log, args);

  // Signals are caught from the start: one arriving while the threads are still starting stops the
  // service as soon as it is up, instead of killing the process and orphaning the embedded database.
  const stopRequested = new Promise<string>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM')).once('SIGINT', () => resolve('SIGINT'));
  });
  const service = await startService(config, log, { reloadFrom: line.configDir ? sources : undefined });
  if (service.config.development) process.stderr.write(await developmentBanner(service.config));
  const signal = await stopRequested;
  log.info({ signal }, 'draining');
  await service.stop().catch((err) => log.error({ err }, 'unclean stop'));
  return 0;
}

const migrateArgsValid = (args: string[]) => args.every((a) => a === '--dry-run');

/** Applies pending migrations (adopting the original's schema first if found); --dry-run prints the plan to stdout instead. */
async function runMigrate(config: Config, log: ReturnType<typeof createLogger>, dryRun: boolean): Promise<number> {
  const use = async (url: string) => {
    const { applied, adopted } = await migrate(url, config.db.namespace, dryRun ? (m) => console.log(m) : (m) => log.info(m), {
      dryRun,
      sealSecret: (rowId, stored) => secretBox(config).sealIfClear(rowId, stored),
    });
    if (!dryRun) log.info({ applied, adopted, namespace: config.db.namespace }, 'migrations complete');
    return 0;
  };
  return withCommandDatabase(config, log, use, config.db.migrationsUrl || config.db.url);
}

/**
 * The build's version and the schema version it knows (its highest migration); with DATABASE_URL, also
 * the one applied in the database. The first line is the bare version, for scripts.
 */
async function versionCommand(sources: ConfigSources): Promise<number> {
  const known = knownSchemaVersion();
  console.log(VERSION);
  console.log(`schema ${known.version} (sql/${known.file})`);
  let config: Config | null = null;
  try {
    config = loadFromSources(sources, { only: 'database' });
  } catch {
    /* no usable database settings: the applied version is not asked for */
  }
  if (config && !config.development) {
    const url = config.db.migrationsUrl || config.db.url;
    await appliedSchemaVersion(url, config.db.namespace).then(
      (applied) => console.log(`database schema ${applied} (namespace ${config.db.namespace})`),
      (err: Error) => console.log(`database schema unknown: ${err.message}`),
    );
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    console.error('portcullis: failed to start:', err instanceof Error ? err.message : err);
    process.exitCode = 1;
  },
);
