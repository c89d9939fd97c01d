// What a reload of the --config-dir turns into: the whole configuration read and checked again, the
// settings that only a restart can change kept at their running values (and named in the log), or
// nothing when the reading fails or changes nothing. roll-over.ts then rolls the HTTP threads over.
import type { Logger } from 'pino';
import { loadFromSources, withJwtSecret, deepFreeze, ConfigError, type Config, type ConfigSources } from '../config/load.js';
import { SETTINGS } from '../config/settings.js';

/**
 * Settings the supervisor acts on once, at start: the listening socket and its threads, the database
 * and its pools, the crypto threads' hashing, the log, traces and metrics exporters, the cleanup loop,
 * and the reloading itself (the original keeps that one static too).
 */
const NEEDS_RESTART =
  /^(DATA_DIR|CONTAINER|DEVELOPMENT_SETUP|API_HOST|API_PORT|HTTP_GUARD|HTTP_MAX_CONNECTIONS|HTTP_WORKERS|CRYPTO_WORKERS|GOMAXPROCS|UV_THREADPOOL_SIZE|DB_|PG|LOG_|TRACING_|METRICS_|OTEL_|PASSWORD_HASH_|RELOADING_)/;

const valueAt = (config: unknown, at: string): unknown =>
  at
    .split('.')
    .reduce<unknown>(
      (node, key) => (node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined),
      config,
    );
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The configuration to roll over to, or null to keep the running one (the reason is logged). */
export function nextConfig(running: Config, sources: ConfigSources, log: Logger): Config | null {
  let loaded: Config;
  try {
    loaded = loadFromSources(sources, { reloading: true });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    log.error({ problems: err.problems }, `configuration not reloaded, the running one is kept: ${err.message}`);
    return null;
  }
  // The development setup's generated secret is not in any file (service.ts sets it at start).
  if (running.development) loaded = withJwtSecret(loaded, running.jwt.secret);
  const changed = SETTINGS.filter((s) => !same(valueAt(loaded, s.path), valueAt(running, s.path))).map((s) => s.name);
  const fixed = changed.filter((name) => NEEDS_RESTART.test(name));
  const applied = changed.filter((name) => !fixed.includes(name));
  if (fixed.length > 0) log.warn({ settings: fixed }, `changed settings need a restart and keep their running values: ${fixed.join(', ')}`);
  if (applied.length === 0) {
    log.info('configuration reloaded: nothing that a reload applies has changed');
    return null;
  }
  const next = structuredClone(loaded);
  for (const name of fixed) {
    const at = SETTINGS.find((s) => s.name === name)!.path.split('.');
    const parent = (at.length > 1 ? valueAt(next, at.slice(0, -1).join('.')) : next) as Record<string, unknown>;
    parent[at[at.length - 1]] = structuredClone(valueAt(running, at.join('.')));
  }
  next.development = running.development;
  for (const warning of next.warnings) log.warn(warning);
  log.info({ settings: applied }, `configuration reloaded: ${applied.join(', ')}`);
  return deepFreeze(next);
}
