// The only reader of the environment, .env and the configuration files (files.ts). Settings are looked up
// once, converted, validated by one ajv schema built from the settings table, checked across fields, then
// deep-frozen and handed down.
// Precedence (docs/settings.md#names-sources-and-precedence), the original's order of sources:
//   the config directory's files (later names first) > the -c file > the environment > .env (read only
//   without -c); within one source, AUTH_X > the setting's extra names in their order > GOTRUE_X (AUTH_
//   first, GOTRUE_ still accepted so deployments move over). A bare name the original reads only as a
//   fallback (PORT, DATABASE_URL) is read only when no prefixed name is set in any source (lookup).
import fs from 'node:fs';
import path from 'node:path';
import { readConfigDir, readConfigFile, ConfigFileError, type Layer, type Vars } from './files.js';
import { Ajv } from 'ajv';
import { READ_BY_NOTHING, SETTINGS, type Setting } from './settings.js';
import type { Config } from './types.js';
import { convert, splitCharacterSets } from './convert.js';
import { crossFieldProblems, crossFieldWarnings, variableOf } from './cross-field.js';
import { cpuBudget } from './cpu-budget.js';
import { heldToTimerLimits } from './timer-limits.js';
import { correctAsTheOriginal } from './original-corrections.js';
import { foldAndCheckDatabaseUrls } from './database-url-check.js';
import { logFileProblem } from './log-file.js';

export type { Config } from './types.js';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

type Env = Vars;

export interface LoadOptions {
  env?: Env;
  /** read when present, and only when no `configFile` is given (as the original) */
  envFile?: string | null;
  /** `-c FILE`: must exist and parse; overrides the environment */
  configFile?: string | null;
  /** `-d DIR`: its .env and .json files override everything else; re-read on every load */
  configDir?: string | null;
  /**
   * 'database': only the settings `portcullis migrate` uses (DATABASE_URL, DB_*, logs, the development
   * setup's data directory) are read and checked; the rest keep their defaults, so a migration job needs
   * no SITE_URL or JWT_SECRET.
   */
  only?: 'database';
}

/**
 * The settings `portcullis migrate` reads (LoadOptions.only). The keys of secrets at rest are read when
 * given, not required: adopting the original's database seals the TOTP secrets it kept in clear
 * (docs/adopting-gotrue.md#mfa-factors-and-passkeys).
 */
const DATABASE_SETTINGS = (name: string) =>
  /^(DB_|PG|LOG_|SECURITY_DB_ENCRYPTION_)/.test(name) || ['DATA_DIR', 'CONTAINER', 'DEVELOPMENT_SETUP', 'JWT_SECRET'].includes(name);

/**
 * What a load starts from, read once: the environment and the contents of .env or the -c file as they
 * were at start. Only the config directory is read again on each load, which is what a reload re-reads
 * (the original likewise never re-reads its -c file).
 */
export interface ConfigSources {
  readonly base: readonly Layer[]; // highest precedence first
  readonly configDir: string | null;
}

/** Reads the environment and .env or the -c file. Throws ConfigError when the file cannot be read or parsed. */
export function configSources({
  env = process.env,
  envFile = '.env',
  configFile = null,
  configDir = null,
}: LoadOptions = {}): ConfigSources {
  const environment: Layer = { label: null, vars: { ...env } };
  if (configFile) {
    try {
      return { base: [{ label: configFile, vars: readConfigFile(configFile) }, environment], configDir };
    } catch (err) {
      if (err instanceof ConfigFileError) throw new ConfigError([`--config ${err.message}`]);
      throw err;
    }
  }
  // As the original: a missing .env is no error, one that does not parse stops the start.
  let dotEnv: Vars = {};
  try {
    if (envFile && fs.existsSync(envFile)) dotEnv = readConfigFile(envFile);
  } catch (err) {
    if (err instanceof ConfigFileError) throw new ConfigError([err.message]);
    throw err;
  }
  return { base: [environment, { label: '.env', vars: dotEnv }], configDir };
}

/**
 * The config directory's files, highest precedence first. A file that cannot be read or parsed is a
 * ConfigError. A directory that does not exist is one too on a reload (the running configuration is
 * kept), but not at start: as with the original, the service starts without it, warns, and the reloader
 * reads it once it appears (a volume mounted later).
 */
function directoryLayers(dir: string | null, missingIsError: boolean, warnings: string[]): Layer[] {
  if (!dir) return [];
  if (!missingIsError && !fs.existsSync(dir)) {
    warnings.push(`--config-dir ${dir} does not exist (yet): starting without it`);
    return [];
  }
  try {
    return readConfigDir(dir).reverse();
  } catch (err) {
    if (err instanceof ConfigFileError) throw new ConfigError([`--config-dir ${err.message}`]);
    throw err;
  }
}

/** Reads the configuration from the environment, .env or the -c file, and the config directory. Throws ConfigError. */
export function loadConfig(options: LoadOptions = {}): Config {
  return loadFromSources(configSources(options), { only: options.only });
}

export interface SourceLoadOptions {
  only?: 'database';
  /** a reload: the config directory must exist */
  reloading?: boolean;
}

/** One load from sources read before (configSources); the config directory is read now. Throws ConfigError. */
export function loadFromSources(sources: ConfigSources, { only, reloading = false }: SourceLoadOptions = {}): Config {
  const warnings: string[] = [];
  const layers = [...directoryLayers(sources.configDir, reloading, warnings), ...sources.base];
  const problems: string[] = [];
  const flat: Record<string, unknown> = {};
  const given = new Map<string, string>(); // setting name → the variable it came from

  for (const setting of SETTINGS) {
    const found = only && !DATABASE_SETTINGS(setting.name) ? undefined : lookup(setting, layers);
    if (found === undefined) {
      flat[setting.name] = setting.default;
      continue;
    }
    given.set(setting.name, found.from);
    const value = convert(setting, found.value);
    if (value instanceof Error) problems.push(`${found.from}: ${value.message}`);
    else flat[setting.name] = value;
  }
  const schemaProblems = validateSchema(flat, given);
  problems.push(...schemaProblems.map(({ problem }) => problem));
  // Read further only where their form passed; here, so `portcullis migrate` checks them too.
  problems.push(...foldAndCheckDatabaseUrls(flat, given, new Set(schemaProblems.map(({ name }) => name))));
  // Opened now, at start, so a file that takes no lines stops the start instead of the logger; a reload
  // keeps the logger it has, so its LOG_FILE is not opened.
  const logFile = reloading ? null : logFileProblem(flat.LOG_FILE as string);
  if (logFile) problems.push(`${given.get('LOG_FILE')}: ${logFile}`);
  const development = !flat.DB_DATABASE_URL;
  if (development && flat.CONTAINER && !flat.DEVELOPMENT_SETUP)
    problems.push(
      'DATABASE_URL: is required in a container; to run the development setup there (embedded PostgreSQL, generated secret, ' +
        'mail to the log, data in DATA_DIR) set PORTCULLIS_DEVELOPMENT=true',
    );
  if (!only) problems.push(...crossFieldProblems(flat, given, development));
  if (problems.length > 0) throw new ConfigError(problems);

  applyThreadDefaults(flat, given, warnings);
  applyDevelopmentDefaults(flat, development);
  warnings.push(...crossFieldWarnings(flat, given), ...correctAsTheOriginal(flat, given), ...heldToTimerLimits(flat, given));
  const ignored = ignoredVariables(layers);
  if (ignored.length > 0) warnings.push(`ignoring settings Portcullis does not know or support: ${ignored.join(', ')}`);
  const config = assemble(flat, development, warnings);
  config.sources = Object.fromEntries(given);
  return deepFreeze(config);
}

/** Returns a new frozen Config with the JWT secret generated for the embedded development setup. */
export function withJwtSecret(config: Config, secret: string): Config {
  return deepFreeze({ ...structuredClone(config), jwt: { ...config.jwt, secret } });
}

const KNOWN = new Set([
  ...SETTINGS.flatMap((s) => [`AUTH_${s.name}`, `GOTRUE_${s.name}`, ...(s.unprefixed ?? [])]),
  ...READ_BY_NOTHING.flatMap((name) => [`AUTH_${name}`, `GOTRUE_${name}`]),
]);

/**
 * Every AUTH_/GOTRUE_ variable of the environment or .env that no setting reads: a typo, or a setting of
 * the original Portcullis does not have (docs/settings.md#ignored-settings). Named at start, never silently dropped.
 */
function ignoredVariables(layers: Layer[]): string[] {
  const names = new Set(layers.flatMap((l) => Object.keys(l.vars)).filter((n) => /^(AUTH|GOTRUE)_/.test(n) && !KNOWN.has(n)));
  return [...names].sort();
}

/**
 * The first non-empty value; `from` names the variable and, outside the environment, its file. Where the
 * original reads a bare name only as the fallback of its own GOTRUE_ name (the setting lists that name,
 * as PORT after GOTRUE_API_PORT), every prefixed name is looked up in every layer before the bare one:
 * the original merges all its sources first, so a platform's DATABASE_URL in the environment does not
 * beat GOTRUE_DB_DATABASE_URL in .env. Elsewhere (OTEL_SERVICE_NAME, the AWS_ variables) the bare name is
 * the original's own and is read source by source with the others.
 */
function lookup(setting: Setting, layers: Layer[]): { value: string; from: string } | undefined {
  const names = [`AUTH_${setting.name}`, ...(setting.unprefixed ?? []), `GOTRUE_${setting.name}`];
  if (!setting.unprefixed?.some((name) => name.startsWith('GOTRUE_'))) return firstIn(names, layers);
  const prefixed = names.filter((name) => /^(AUTH|GOTRUE)_/.test(name));
  return (
    firstIn(prefixed, layers) ??
    firstIn(
      names.filter((name) => !prefixed.includes(name)),
      layers,
    )
  );
}

function firstIn(names: string[], layers: Layer[]): { value: string; from: string } | undefined {
  for (const { label, vars } of layers) {
    for (const name of names) {
      const value = vars[name];
      if (value !== undefined && value !== '') return { value, from: label ? `${name} (${label})` : name };
    }
  }
  return undefined;
}

const ajv = new Ajv({ allErrors: true, strict: false });
const validateFlat = ajv.compile({
  type: 'object',
  properties: Object.fromEntries(SETTINGS.filter((x) => x.schema).map((x) => [x.name, x.schema])),
});

/** A feature's settings, checked only while the feature is on (Setting.checkedWhen). */
const CHECKED_WHEN = new Map(SETTINGS.flatMap((x) => (x.checkedWhen ? [[x.name, x.checkedWhen] as const] : [])));

/** Each schema error, with the setting it is about. */
function validateSchema(flat: Record<string, unknown>, given: Map<string, string>): Array<{ name: string; problem: string }> {
  const checked = (name: string) => CHECKED_WHEN.get(name)?.(flat) ?? true;
  const supplied = Object.fromEntries([...given.keys()].filter(checked).map((name) => [name, flat[name]]));
  if (validateFlat(supplied)) return [];
  return (validateFlat.errors ?? []).map((e) => {
    // A list's item is reported by its position (/NAME/0): name the setting, show the item.
    const [name = '', index] = e.instancePath.replace(/^\//, '').split('/');
    const value = index === undefined ? flat[name] : (flat[name] as unknown[])[Number(index)];
    const detail =
      e.keyword === 'enum'
        ? `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => (v === '' ? '(empty)' : v)).join(', ')}`
        : e.keyword === 'pattern'
          ? 'is not in the expected format'
          : (e.message ?? 'is invalid');
    return { name, problem: `${given.get(name)}: "${withoutPasswords(String(value))}" ${detail}` };
  });
}

/** A refused value as shown back: a URL's password (or libpq's `password=`) goes to stderr and logs as ***. */
function withoutPasswords(value: string): string {
  return value
    .replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^:@/\s]*:)[^@/\s]*@/gi, '$1***@')
    .replace(/(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|\S*)/gi, '$1***');
}

/** Thread counts not given, from the cores the service may use (cpu-budget.ts). */
function applyThreadDefaults(flat: Record<string, unknown>, given: Map<string, string>, warnings: string[]): void {
  const gomaxprocs = flat.GOMAXPROCS as string;
  const budget = cpuBudget(gomaxprocs);
  if (gomaxprocs && budget.from !== 'GOMAXPROCS') {
    warnings.push(
      `${variableOf(given, 'GOMAXPROCS')}: "${gomaxprocs}" is not a positive whole number; ignored, as Go's runtime ignores it`,
    );
  }
  // One core is left to everything else the service needs to run: PostgreSQL when it is on the same
  // machine (the embedded default), the TLS proxy, the kernel's network work. On 2 cores one HTTP thread
  // answered 7-30 % more requests per second than two in every bench scenario (bench/README.md).
  if (!flat.HTTP_WORKERS) flat.HTTP_WORKERS = Math.max(1, budget.cores - 1);
  if (!flat.CRYPTO_WORKERS) flat.CRYPTO_WORKERS = Math.max(2, budget.cores);
}

function applyDevelopmentDefaults(flat: Record<string, unknown>, development: boolean): void {
  flat.DATA_DIR = path.resolve(String(flat.DATA_DIR));
  if (!development) return;
  const port = flat.API_PORT as number;
  flat.SITE_URL ||= 'http://localhost:3000';
  // What `supabase start` configures, so the development setup's users and tokens look like a Supabase project's.
  flat.JWT_AUD ||= 'authenticated';
  flat.JWT_DEFAULT_GROUP_NAME ||= 'authenticated';
  flat.API_EXTERNAL_URL ||= `http://localhost:${port}`;
}

function assemble(flat: Record<string, unknown>, development: boolean, warnings: string[]): Config {
  const root: Record<string, unknown> = { development, sources: {}, warnings };
  for (const setting of SETTINGS) {
    const keys = setting.path.split('.');
    let node = root;
    for (const key of keys.slice(0, -1)) node = (node[key] ??= {}) as Record<string, unknown>;
    node[keys[keys.length - 1]] = flat[setting.name];
  }
  const config = root as unknown as Config & { password: { requiredCharacters: unknown } };
  config.password.requiredCharacters = splitCharacterSets(flat.PASSWORD_REQUIRED_CHARACTERS as string);
  config.password.minLength = Math.max(6, config.password.minLength);
  config.sms.missingCredentials = flat.SMS_MISSING_CREDENTIALS as string[];
  config.api.externalUrl = config.api.externalUrl.replace(/\/+$/, '');
  // The deprecated list, as the original keeps honouring it: each provider in a domain named after itself,
  // unless the map places it explicitly.
  const domains = { ...config.experimental.providerLinkingDomains };
  for (const provider of config.experimental.providersWithOwnLinkingDomain) domains[provider] ??= provider;
  config.experimental.providerLinkingDomains = domains;
  return config;
}

export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
