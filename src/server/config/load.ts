// The only reader of the environment and of .env. Settings are looked up once, converted, validated by
// one ajv schema built from the settings table, checked across fields, then deep-frozen and handed down.
// Precedence (docs/settings.md#names-sources-and-precedence decisions: AUTH_ first, GOTRUE_ still accepted so deployments move over):
//   environment AUTH_X > environment unprefixed alias > environment GOTRUE_X > the same three from .env.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import dotenv from 'dotenv';
import { Ajv } from 'ajv';
import { SETTINGS, SMS_REQUIRED, hookEnvName, type Setting } from './settings.js';
import { HOOK_NAMES, type Config, type SendLimit } from './types.js';
import { hookTargetProblems } from '../hooks/targets.js';
import { HTTP_HOOK_TIMEOUT_MS } from '../hooks/http-transport.js';
import { parseSeconds } from './duration.js';
import { KeySetError, SUPPORTED_ALGORITHMS, buildKeySet, parseKeySet } from '../auth/keys.js';

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

function convert(setting: Setting, text: string): unknown {
  const raw = text.trim();
  switch (setting.kind) {
    case 'string':
      return raw;
    case 'logLevel': {
      const level = raw.toLowerCase();
      return level === 'warning' ? 'warn' : level;
    }
    case 'bool':
      if (/^(true|1|yes|on|t)$/i.test(raw)) return true;
      if (/^(false|0|no|off|f)$/i.test(raw)) return false;
      return new Error(`"${raw}" is not a boolean (use true or false)`);
    case 'int':
      return /^-?\d+$/.test(raw) ? Number(raw) : new Error(`"${raw}" is not a whole number`);
    case 'duration': {
      const seconds = parseSeconds(raw);
      return seconds === null ? new Error(`"${raw}" is not a duration (seconds like 900, or 15m, 1h30m)`) : seconds;
    }
    case 'list':
      return raw
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean);
    case 'pipeList':
      return raw
        .split('|')
        .map((x) => x.trim())
        .filter(Boolean);
    case 'sendLimit':
      return parseSendLimit(raw);
    case 'map':
      return parseMap(raw);
    case 'jwkSet':
      return parseJwkSet(raw);
  }
}

function parseSendLimit(raw: string): SendLimit | Error {
  const [count, period] = raw.split('/');
  if (!/^\d+$/.test(count)) return new Error(`"${raw}" is not a limit (N per hour, or N/duration like 10/1m)`);
  if (period === undefined) return { max: Number(count), periodSeconds: 3600, bucket: false };
  const seconds = parseSeconds(period);
  if (seconds === null || seconds <= 0) return new Error(`"${raw}" has an invalid period "${period}"`);
  return { max: Number(count), periodSeconds: seconds, bucket: true };
}

function parseJwkSet(raw: string): unknown {
  try {
    return parseKeySet(raw);
  } catch (err) {
    if (err instanceof KeySetError) return err;
    throw err;
  }
}

function parseMap(raw: string): Record<string, string> | Error {
  const out: Record<string, string> = {};
  for (const pair of raw
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)) {
    const [key, value] = pair.split(':').map((x) => x.trim());
    if (!key || !value) return new Error(`"${pair}" is not a key:value pair`);
    out[key.replace(/^\+/, '')] = value;
  }
  return out;
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

function crossFieldProblems(flat: Record<string, unknown>, given: Map<string, string>, development: boolean): string[] {
  const problems: string[] = [];
  const require = (name: string, why: string) => {
    if (!flat[name]) problems.push(`AUTH_${name}: is required ${why}`);
  };
  if (!development) {
    for (const name of ['SITE_URL', 'API_EXTERNAL_URL']) require(name, 'when DATABASE_URL is set');
    // With JWT_KEYS the keys sign and verify; JWT_SECRET then only verifies kid-less tokens, if set.
    const keys = flat.JWT_KEYS;
    if (!Array.isArray(keys) || keys.length === 0) require('JWT_SECRET', 'when DATABASE_URL is set and JWT_KEYS is not');
    if (!given.has('DB_DRIVER')) problems.push('AUTH_DB_DRIVER: is required when DATABASE_URL is set (must be postgres)');
  }
  if (flat.SMTP_HOST) require('SMTP_ADMIN_EMAIL', 'when SMTP_HOST is set (it is the From address)');
  // An enabled OAuth provider with missing credentials does not stop start-up: it is named in a warning and
  // treated as disabled (providers/configured.ts), as the original fails only at /authorize.
  const validUntil = flat.SMS_TEST_OTP_VALID_UNTIL as string;
  if (validUntil && Number.isNaN(Date.parse(validUntil))) {
    problems.push(`${given.get('SMS_TEST_OTP_VALID_UNTIL')}: "${validUntil}" is not a time (use RFC 3339, like 2030-01-01T00:00:00Z)`);
  }
  // The original only warns and then fails every ceremony; WebAuthn without a relying party cannot work.
  const webauthnUser = ['PASSKEY_ENABLED', 'MFA_WEB_AUTHN_ENROLL_ENABLED', 'MFA_WEB_AUTHN_VERIFY_ENABLED'].find((name) => flat[name]);
  if (webauthnUser) {
    for (const name of ['WEBAUTHN_RP_ID', 'WEBAUTHN_RP_DISPLAY_NAME', 'WEBAUTHN_RP_ORIGINS'])
      if (!flat[name] || (Array.isArray(flat[name]) && flat[name].length === 0))
        problems.push(`AUTH_${name}: is required when ${webauthnUser} is true`);
  }
  if (flat.MAILER_AUTOCONFIRM && flat.MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS)
    problems.push('AUTH_MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS: cannot be true together with MAILER_AUTOCONFIRM');
  if (flat.SECURITY_CAPTCHA_ENABLED) require('SECURITY_CAPTCHA_SECRET', 'when SECURITY_CAPTCHA_ENABLED is true');
  if (typeof flat.JWT_SECRET === 'string' && flat.JWT_SECRET && flat.JWT_SECRET.length < 16)
    problems.push('AUTH_JWT_SECRET: must be at least 16 characters');
  problems.push(...validMethodProblems(flat, given));
  problems.push(...hookProblems(flat));
  problems.push(...dbEncryptionProblems(flat));
  return problems;
}

/** The key that encrypts secrets at rest needs an id, and every key must be 256 bits (docs/mfa.md#secrets-at-rest). */
function dbEncryptionProblems(flat: Record<string, unknown>): string[] {
  const problems: string[] = [];
  if (flat.SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY && !flat.SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID)
    problems.push('AUTH_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID: is required when SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY is set');
  if (flat.SECURITY_DB_ENCRYPTION_ENCRYPT && !flat.SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY)
    problems.push('AUTH_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY: is required when SECURITY_DB_ENCRYPTION_ENCRYPT is true');
  const keys = flat.SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS;
  if (keys && typeof keys === 'object' && !(keys instanceof Error)) {
    for (const [id, key] of Object.entries(keys as Record<string, string>)) {
      if (Buffer.from(key, 'base64url').length !== 32 || !/^[A-Za-z0-9_-]+$/.test(key))
        problems.push(`AUTH_SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS: key "${id}" must be 256 bits in base64url`);
    }
  }
  return problems;
}

/** Tokens this service signs must pass its own verification: JWT_VALID_METHODS must include the signer's alg. */
function validMethodProblems(flat: Record<string, unknown>, given: Map<string, string>): string[] {
  const methods = flat.JWT_VALID_METHODS as string[];
  if (!Array.isArray(methods) || methods.length === 0 || !methods.every((m) => SUPPORTED_ALGORITHMS.includes(m))) return [];
  const keys = Array.isArray(flat.JWT_KEYS) ? (flat.JWT_KEYS as Array<{ alg?: string; kid?: string; key_ops?: string[] }>) : [];
  const signer = keys.find((k) => k.key_ops?.includes('sign'));
  const alg = signer ? (buildKeySet(keys).find((k) => k.signs)?.alg ?? '') : 'HS256';
  return methods.includes(alg) ? [] : [`${given.get('JWT_VALID_METHODS')}: must include ${alg}, the algorithm new tokens are signed with`];
}

/** Each enabled hook needs a URI; any URI must be one the transports can call, with well-formed secrets. */
function hookProblems(flat: Record<string, unknown>): string[] {
  const problems = HOOK_NAMES.flatMap((hook) => {
    const env = `HOOK_${hookEnvName(hook)}`;
    const uri = flat[`${env}_URI`] as string;
    if (flat[`${env}_ENABLED`] && !uri) return [`AUTH_${env}_URI: is required when ${env}_ENABLED is true`];
    return hookTargetProblems(uri, flat[`${env}_SECRETS`] as string[]).map((p) => `AUTH_${env}_${p}`);
  });
  // An HTTP hook may hold its request's transaction for its whole budget (docs/architecture.md#mail-and-sms-inside-the-transaction).
  const idle = flat.DB_IDLE_IN_TRANSACTION_TIMEOUT as number;
  const httpHook = HOOK_NAMES.some(
    (h) => flat[`HOOK_${hookEnvName(h)}_ENABLED`] && /^https?:/.test(String(flat[`HOOK_${hookEnvName(h)}_URI`])),
  );
  if (httpHook && idle > 0 && idle * 1000 <= HTTP_HOOK_TIMEOUT_MS) {
    problems.push(`AUTH_DB_IDLE_IN_TRANSACTION_TIMEOUT: must be longer than an HTTP hook's ${HTTP_HOOK_TIMEOUT_MS / 1000} s (or 0)`);
  }
  return problems;
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
  return config;
}

/** Sets separated by ':'; a set ending in '\' continues with a literal ':' (docs/passwords.md#strength-rules). */
export function splitCharacterSets(raw: string): string[] {
  const sets: string[] = [];
  let current = '';
  for (const part of raw.split(':')) {
    if (part.endsWith('\\')) {
      current += part.slice(0, -1) + ':';
      continue;
    }
    current += part;
    if (current) sets.push(current);
    current = '';
  }
  if (current) sets.push(current);
  return sets;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
