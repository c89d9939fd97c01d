// The only reader of the environment and of .env. Settings are looked up once, converted, validated by
// one ajv schema built from the settings table, checked across fields, then deep-frozen and handed down.
// Precedence (docs/settings.md#names-sources-and-precedence decisions: AUTH_ first, GOTRUE_ still accepted so deployments move over):
//   environment AUTH_X > environment unprefixed alias > environment GOTRUE_X > the same three from .env.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import dotenv from 'dotenv';
import { Ajv } from 'ajv';
import { SETTINGS, SMS_REQUIRED, type Setting } from './settings.js';
import type { Config } from './types.js';
import { convert, splitCharacterSets } from './convert.js';
import { crossFieldProblems } from './cross-field.js';

export type { Config } from './types.js';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

type Env = Record<string, string | undefined>;

export interface LoadOptions {
  env?: Env;
  envFile?: string | null;
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
  /^(DB_|LOG_|SECURITY_DB_ENCRYPTION_)/.test(name) || ['DATA_DIR', 'CONTAINER', 'DEVELOPMENT_SETUP', 'JWT_SECRET'].includes(name);

/** Reads the configuration from `.env` (if present) and the environment. Throws ConfigError. */
export function loadConfig({ env = process.env, envFile = '.env', only }: LoadOptions = {}): Config {
  const file = envFile && fs.existsSync(envFile) ? dotenv.parse(fs.readFileSync(envFile)) : {};
  const problems: string[] = [];
  const flat: Record<string, unknown> = {};
  const given = new Map<string, string>(); // setting name → the variable it came from

  for (const setting of SETTINGS) {
    const found = only && !DATABASE_SETTINGS(setting.name) ? undefined : lookup(setting, env, file);
    if (found === undefined) {
      flat[setting.name] = setting.default;
      continue;
    }
    given.set(setting.name, found.from);
    const value = convert(setting, found.value);
    if (value instanceof Error) problems.push(`${found.from}: ${value.message}`);
    else flat[setting.name] = value;
  }
  problems.push(...validateSchema(flat, given));
  const development = !flat.DB_DATABASE_URL;
  if (development && flat.CONTAINER && !flat.DEVELOPMENT_SETUP)
    problems.push(
      'DATABASE_URL: is required in a container; to run the development setup there (embedded PostgreSQL, generated secret, ' +
        'mail to the log, data in DATA_DIR) set PORTCULLIS_DEVELOPMENT=true',
    );
  if (!only) problems.push(...crossFieldProblems(flat, given, development));
  if (problems.length > 0) throw new ConfigError(problems);

  applyDevelopmentDefaults(flat, development);
  const warnings = [...smsCredentialWarnings(flat)];
  const ignored = ignoredVariables(env, file);
  if (ignored.length > 0) warnings.push(`ignoring settings Portcullis does not know or support: ${ignored.join(', ')}`);
  const config = assemble(flat, development, warnings);
  config.sources = Object.fromEntries(given);
  return deepFreeze(config);
}

/** Returns a new frozen Config with the JWT secret generated for the embedded development setup. */
export function withJwtSecret(config: Config, secret: string): Config {
  return deepFreeze({ ...structuredClone(config), jwt: { ...config.jwt, secret } });
}

const KNOWN = new Set(SETTINGS.flatMap((s) => [`AUTH_${s.name}`, `GOTRUE_${s.name}`]));

/**
 * Every AUTH_/GOTRUE_ variable of the environment or .env that no setting reads: a typo, or a setting of
 * the original Portcullis does not have (docs/settings.md#ignored-settings). Named at start, never silently dropped.
 */
function ignoredVariables(env: Env, file: Env): string[] {
  const names = new Set([...Object.keys(env), ...Object.keys(file)].filter((n) => /^(AUTH|GOTRUE)_/.test(n) && !KNOWN.has(n)));
  return [...names].sort();
}

/**
 * As the original: a gateway named with empty credentials does not stop the service; phone sign-ins
 * fail when a code is sent (docs/sms.md#gateways), and the start-up log says why in advance.
 */
function smsCredentialWarnings(flat: Record<string, unknown>): string[] {
  const gateway = flat.SMS_PROVIDER as string;
  const missing = gateway ? (SMS_REQUIRED[gateway] ?? []).filter((name) => !flat[name]) : [];
  flat.SMS_MISSING_CREDENTIALS = missing.map((name) => `AUTH_${name}`);
  if (missing.length === 0) return [];
  return [
    `SMS_PROVIDER is ${gateway} but ${missing.map((n) => `AUTH_${n}`).join(', ')} ${missing.length > 1 ? 'are' : 'is'} empty: sending SMS will fail`,
  ];
}

function lookup(setting: Setting, env: Env, file: Env): { value: string; from: string } | undefined {
  const names = [`AUTH_${setting.name}`, ...(setting.unprefixed ?? []), `GOTRUE_${setting.name}`];
  for (const source of [env, file]) {
    for (const name of names) {
      const value = source[name];
      if (value !== undefined && value !== '')
        return { value, from: name === `AUTH_${setting.name}` || source === env ? name : `${name} (.env)` };
    }
  }
  return undefined;
}

const ajv = new Ajv({ allErrors: true, strict: false });
const validateFlat = ajv.compile({
  type: 'object',
  properties: Object.fromEntries(SETTINGS.filter((x) => x.schema).map((x) => [x.name, x.schema])),
});

function validateSchema(flat: Record<string, unknown>, given: Map<string, string>): string[] {
  const supplied = Object.fromEntries([...given.keys()].map((name) => [name, flat[name]]));
  if (validateFlat(supplied)) return [];
  return (validateFlat.errors ?? []).map((e) => {
    const name = e.instancePath.replace(/^\//, '');
    const detail =
      e.keyword === 'enum'
        ? `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => (v === '' ? '(empty)' : v)).join(', ')}`
        : e.keyword === 'pattern'
          ? 'is not in the expected format'
          : (e.message ?? 'is invalid');
    return `${given.get(name)}: "${String(flat[name])}" ${detail}`;
  });
}

function applyDevelopmentDefaults(flat: Record<string, unknown>, development: boolean): void {
  // One core is left to everything else the service needs to run: PostgreSQL when it is on the same
  // machine (the embedded default), the TLS proxy, the kernel's network work. On 2 cores one HTTP thread
  // answered 7-30 % more requests per second than two in every bench scenario (bench/README.md).
  if (!flat.HTTP_WORKERS) flat.HTTP_WORKERS = Math.max(1, os.availableParallelism() - 1);
  if (!flat.CRYPTO_WORKERS) flat.CRYPTO_WORKERS = Math.max(2, os.availableParallelism());
  flat.DATA_DIR = path.resolve(String(flat.DATA_DIR));
  if (!development) return;
  const port = flat.API_PORT as number;
  flat.SITE_URL ||= 'http://localhost:3000';
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
  config.smtp.senderName ||= config.smtp.adminEmail;
  config.sms.missingCredentials = flat.SMS_MISSING_CREDENTIALS as string[];
  config.api.externalUrl = config.api.externalUrl.replace(/\/+$/, '');
  // The deprecated list, as the original keeps honouring it: each provider in a domain named after itself,
  // unless the map places it explicitly.
  const domains = { ...config.experimental.providerLinkingDomains };
  for (const provider of config.experimental.providersWithOwnLinkingDomain) domains[provider] ??= provider;
  config.experimental.providerLinkingDomains = domains;
  return config;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
