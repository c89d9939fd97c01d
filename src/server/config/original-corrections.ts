// Single settings the original corrects at start instead of refusing them, corrected the same way here, each
// with a start-up warning: a configuration that started the original starts here (docs/settings.md). Run by
// config/load.ts once every setting has passed its own schema.
import { parseSmtpHeaders } from '../delivery/mail/smtp-headers.js';
import { parseBlockedMx } from '../delivery/mail/address-check.js';
import { CAPTCHA_PROVIDERS, variableOf } from './cross-field.js';
import { rpIdProblem } from '../webauthn/rp-id.js';
import { SUPPORTED_ALGORITHMS, keySetWarnings } from '../auth/keys.js';
import type { JsonWebKey } from 'node:crypto';
import { LOG_LEVELS } from './types.js';

/** Corrects `flat` in place; the warnings name the variable each value came from. */
export function correctAsTheOriginal(flat: Record<string, unknown>, given: Map<string, string>): string[] {
  return [
    ...clampOtpLengthsAndFlowExpiry(flat, given),
    ...zeroIsTheDefault(flat, given),
    ...requestDurationWithoutDeadline(flat, given),
    ...sendIntervalOfZero(flat, given),
    ...ignoreUnreadableJson(flat, given),
    ...captchaDefaults(flat),
    ...samlDefaults(flat),
    ...unknownMetricsExporter(flat, given),
    ...sqlLogging(flat, given),
    ...otlpProtocol(flat, given),
    ...shortJwtSecret(flat, given),
    ...unusableWebauthnSettings(flat, given),
    ...jwtKeyWarnings(flat, given),
    ...connPercentage(flat, given),
    ...debugSwitch(flat, given),
    ...unknownLogLevel(flat, given),
    ...unmatchableExternalHosts(flat, given),
    ...largeBloomFilter(flat, given),
    ...unusedEncryptionKey(flat, given),
  ];
}

/**
 * As the original: a captcha timeout of 0 is its default, 10 s; and while captcha is off its provider is
 * never read, so a name left over from another setup (cross-field.ts refuses it once captcha is on) is
 * replaced by the default without a word.
 */
function captchaDefaults(flat: Record<string, unknown>): string[] {
  if (flat.SECURITY_CAPTCHA_TIMEOUT === 0) flat.SECURITY_CAPTCHA_TIMEOUT = 10;
  if (!flat.SECURITY_CAPTCHA_ENABLED && !CAPTCHA_PROVIDERS.includes(flat.SECURITY_CAPTCHA_PROVIDER as string)) {
    flat.SECURITY_CAPTCHA_PROVIDER = 'hcaptcha';
  }
  return [];
}

/** The settings the original reads 0 of as its default (not as "never" or "at once"), and that default. */
const ZERO_IS_DEFAULT: Array<[name: string, value: number]> = [
  ['JWT_EXP', 3600],
  ['MAILER_OTP_EXP', 86400],
  ['SMS_OTP_EXP', 60],
  ['INTERNAL_HTTP_TIMEOUT', 10],
];

/** As the original: 0 in one of ZERO_IS_DEFAULT's settings is its default, said at start. */
function zeroIsTheDefault(flat: Record<string, unknown>, given: Map<string, string>): string[] {
  const warnings: string[] = [];
  for (const [name, value] of ZERO_IS_DEFAULT) {
    if (flat[name] !== 0) continue;
    flat[name] = value;
    warnings.push(`${variableOf(given, name)}: 0 means the default, ${value} s, as the original does`);
  }
  return warnings;
}

/**
 * The original sets no deadline at all for API_MAX_REQUEST_DURATION of 0 or less; here every request has
 * one (http/deadline-clock.ts), so such a value becomes a day, longer than any request can usefully take.
 */
function requestDurationWithoutDeadline(flat: Record<string, unknown>, given: Map<string, string>): string[] {
  if ((flat.API_MAX_REQUEST_DURATION as number) > 0) return [];
  flat.API_MAX_REQUEST_DURATION = NO_DEADLINE_SECONDS;
  return [
    `${variableOf(given, 'API_MAX_REQUEST_DURATION')}: the original sets no request deadline for 0 or less; requests here may take up to a day`,
  ];
}

export const NO_DEADLINE_SECONDS = 86400;

/**
 * As the original: a per-user interval of 0 between mails or SMS is one minute, not "no interval", so the
 * throttle against mail bombing and SMS pumping never goes away (docs/settings.md#mail).
 */
function sendIntervalOfZero(flat: Record<string, unknown>, given: Map<string, string>): string[] {
  const warnings: string[] = [];
  for (const [name, what] of [
    ['SMTP_MAX_FREQUENCY', 'mails'],
    ['SMS_MAX_FREQUENCY', 'SMS'],
  ]) {
    if (flat[name] !== 0) continue;
    flat[name] = 60;
    warnings.push(`${variableOf(given, name)}: 0 would let ${what} to one user go out back to back; using 60 s, as the original does`);
  }
  return warnings;
}

/** As the original: a SAML relay state validity period of 0 is its default, two minutes (not "always expired"). */
function samlDefaults(flat: Record<string, unknown>): string[] {
  if (flat.SAML_RELAY_STATE_VALIDITY_PERIOD === 0) flat.SAML_RELAY_STATE_VALIDITY_PERIOD = 120;
  return [];
}

/** As the original: a METRICS_EXPORTER it has no exporter for starts the service and exports nothing. */
function unknownMetricsExporter(flat: Record<string, unknown>, given: Map<string, string>): string[] {
  const exporter = flat.METRICS_EXPORTER;
  if (exporter === 'opentelemetry' || exporter === 'prometheus') return [];
  flat.METRICS_EXPORTER = 'none';
  if (!flat.METRICS_ENABLED) return [];
  return [
    `${variableOf(given, 'METRICS_EXPORTER')}: "${String(exporter)}" is neither opentelemetry nor prometheus; no metrics are exported, as in the original`,
  ];
}

/**
 * As the original: LOG_SQL logs statements when it is `statement` or `all` and nothing otherwise. A
 * value that logs everything, values included, is said at start: the values are users' addresses,
 * metadata and token hashes, which no other log line carries.
 */
function sqlLogging(flat: Record<string, unknown>, given: Map<string, string>): string[] {
  const value = flat.LOG_SQL;
  if (value === 'all') {
    return [
      `${variableOf(given, 'LOG_SQL')}: every statement is logged with its values (addresses, metadata, token hashes); use it only to debug`,
    ];
  }
  if (value === 'statement' || value === 'none') return [];
  flat.LOG_SQL = 'none';
  return [
    `${variableOf(given, 'LOG_SQL')}: "${String(value)}" is none of none, statement, all; no statement is logged, as in the original`,
  ];
}

/**
 * The original speaks OTLP over gRPC or HTTP with protobuf bodies, and for another protocol logs an error and
 * exports nothing; here the standard's `http/json` is spoken too, and another value is named at start and
 * replaced by the default, so a typo does not silently cost the traces (docs/observability.md#tracing).
 */
function otlpProtocol(flat: Record<string, unknown>, given: Map<string, string>): string[] {
  const warnings: string[] = [];
  for (const name of ['TRACING_OTEL_EXPORTER_OTLP_PROTOCOL', 'METRICS_OTEL_EXPORTER_OTLP_PROTOCOL']) {
    const protocol = flat[name];
    if (OTLP_PROTOCOLS.includes(protocol as string)) continue;
    flat[name] = 'http/protobuf';
    const used = name.startsWith('TRACING') ? flat.TRACING_ENABLED : flat.METRICS_ENABLED && flat.METRICS_EXPORTER === 'opentelemetry';
    if (used)
      warnings.push(`${variableOf(given, name)}: "${String(protocol)}" is none of ${OTLP_PROTOCOLS.join(', ')}; http/protobuf is spoken`);
  }
  return [...new Set(warnings)];
}

const OTLP_PROTOCOLS = ['http/protobuf', 'http/json', 'grpc'];

/**
 * The original signs with a JWT_SECRET of any length, so a deployment using a short one must still start
 * here; it is told, as a secret that short can be guessed and then any token forged.
 */
function shortJwtSecret(flat: Record<string, unknown>, given: Map<string, string>): string[] {
  const secret = flat.JWT_SECRET;
  if (typeof secret !== 'string' || !secret || secret.length >= 16) return [];
  return [
    `${variableOf(given, 'JWT_SECRET')}: only ${secret.length} characters, which can be guessed, and then any token forged; use at least 32 random characters (the original accepts it, so it is used)`,
  ];
}

/**
 * The original starts with a relying party id its WebAuthn library refuses, and with a passkey challenge
 * expiry of 0 s or less, and then fails every ceremony concerned: so does this service, and says so at
 * start while the feature is on (docs/passkeys.md#settings).
 */
function unusableWebauthnSettings(flat: Record<string, unknown>, given: Map<string, string>): string[] {
  const warnings: string[] = [];
  const rpId = flat.WEBAUTHN_RP_ID as string;
  const problem = rpId ? rpIdProblem(rpId) : null;
  if (problem && (flat.PASSKEY_ENABLED || flat.MFA_WEB_AUTHN_ENROLL_ENABLED || flat.MFA_WEB_AUTHN_VERIFY_ENABLED)) {
    warnings.push(
      `${variableOf(given, 'WEBAUTHN_RP_ID')}: "${rpId}" is no relying party id: ${problem}; every WebAuthn ceremony (passkeys, WebAuthn factors) ` +
        'answers 500, as in the original, until it is a bare domain such as example.com or localhost',
    );
  }
  const expiry = flat.WEBAUTHN_CHALLENGE_EXPIRY_DURATION as number;
  if (expiry <= 0 && flat.PASSKEY_ENABLED) {
    warnings.push(
      `${variableOf(given, 'WEBAUTHN_CHALLENGE_EXPIRY_DURATION')}: ${expiry} s; every passkey challenge has expired when it is answered ` +
        '(400 webauthn_challenge_expired), as in the original',
    );
  }
  return warnings;
}

/** JWT_KEYS and JWT_VALID_METHODS the original starts with though they are weak or name what it never matches. */
function jwtKeyWarnings(flat: Record<string, unknown>, given: Map<string, string>): string[] {
  const keys = keySetWarnings(flat.JWT_KEYS as JsonWebKey[]).map((w) => `${variableOf(given, 'JWT_KEYS')}: ${w}`);
  const unknown = (flat.JWT_VALID_METHODS as string[]).filter((alg) => !SUPPORTED_ALGORITHMS.includes(alg));
  if (unknown.length === 0) return keys;
  return [
    ...keys,
    `${variableOf(given, 'JWT_VALID_METHODS')}: ${unknown.join(', ')} ${unknown.length > 1 ? 'are' : 'is'} no algorithm Portcullis verifies (${SUPPORTED_ALGORITHMS.join(', ')}); no token is accepted by ${unknown.length > 1 ? 'them' : 'it'}, as in the original`,
  ];
}

/** As the original: DB_CONN_PERCENTAGE outside 0–100 is clamped into it. */
function connPercentage(flat: Record<string, unknown>, given: Map<string, string>): string[] {
  const percentage = flat.DB_CONN_PERCENTAGE as number;
  const clamped = Math.min(Math.max(percentage, 0), 100);
  if (clamped === percentage) return [];
  flat.DB_CONN_PERCENTAGE = clamped;
  return [`${variableOf(given, 'DB_CONN_PERCENTAGE')}: ${percentage} is outside 0–100; using ${clamped}, as the original does`];
}

/** DEBUG is no setting of the original, so a value that is no boolean (GOTRUE_DEBUG=verbose) must not stop the start. */
function debugSwitch(flat: Record<string, unknown>, given: Map<string, string>): string[] {
  const text = String(flat.DEBUG).trim();
  const on = /^(true|1|yes|on|t)$/i.test(text);
  flat.DEBUG = on;
  if (on || /^(false|0|no|off|f)$/i.test(text)) return [];
  return [`${variableOf(given, 'DEBUG')}: "${text}" is not a boolean; false`];
}

/**
 * The original starts with a log level it cannot read (`verbose`) and then logs nothing below panic, its
 * parse error being dropped; here it starts too, but keeps the default, info, and says so: the operator
 * evidently wanted more lines, not none (docs/differences.md#telemetry).
 */
function unknownLogLevel(flat: Record<string, unknown>, given: Map<string, string>): string[] {
  const level = flat.LOG_LEVEL as string;
  if ((LOG_LEVELS as readonly string[]).includes(level)) return [];
  flat.LOG_LEVEL = 'info';
  return [`${variableOf(given, 'LOG_LEVEL')}: "${level}" is none of ${LOG_LEVELS.join(', ')}; logging at info`];
}

/** What X-Forwarded-Host can be: a host name and a port. Another entry (a URL) never matches one. */
const FORWARDED_HOST = /^[A-Za-z0-9.-]+(:[0-9]{1,5})?$/;

/** As the original: a MAILER_EXTERNAL_HOSTS entry that is no host name starts the service and matches no request. */
function unmatchableExternalHosts(flat: Record<string, unknown>, given: Map<string, string>): string[] {
  const hosts = flat.MAILER_EXTERNAL_HOSTS as string[];
  const unmatchable = hosts.filter((host) => !FORWARDED_HOST.test(host));
  if (unmatchable.length === 0) return [];
  flat.MAILER_EXTERNAL_HOSTS = hosts.filter((host) => FORWARDED_HOST.test(host));
  return [
    `${variableOf(given, 'MAILER_EXTERNAL_HOSTS')}: ${unmatchable.map((h) => `"${h}"`).join(', ')} ${unmatchable.length > 1 ? 'are' : 'is'} no host name (like auth.example.com); no X-Forwarded-Host matches ${unmatchable.length > 1 ? 'them' : 'it'}, as in the original`,
  ];
}

/** Each HTTP thread holds the whole filter: over 10 million items (54 MB at 1e-9) is likely a typo, said at start. */
function largeBloomFilter(flat: Record<string, unknown>, given: Map<string, string>): string[] {
  const items = flat.PASSWORD_HIBP_BLOOM_ITEMS as number;
  if (!flat.PASSWORD_HIBP_ENABLED || !flat.PASSWORD_HIBP_BLOOM_ENABLED || items <= 10_000_000) return [];
  return [`${variableOf(given, 'PASSWORD_HIBP_BLOOM_ITEMS')}: ${items} items take more than 54 MB of memory in each HTTP thread`];
}

/**
 * With SECURITY_DB_ENCRYPTION_ENCRYPT off the original never reads the encryption key. Here secrets are always
 * sealed (docs/mfa.md#secrets-at-rest), with that key when it is usable; one without an id or not 256 bits in
 * base64url is ignored, and the key derived from JWT_SECRET seals instead.
 */
function unusedEncryptionKey(flat: Record<string, unknown>, given: Map<string, string>): string[] {
  const key = flat.SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY as string;
  if (flat.SECURITY_DB_ENCRYPTION_ENCRYPT || !key) return [];
  if (flat.SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID && /^[A-Za-z0-9_-]{43}$/.test(key)) return [];
  flat.SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY = '';
  return [
    `${variableOf(given, 'SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY')}: ignored, as the original ignores it with SECURITY_DB_ENCRYPTION_ENCRYPT off: ` +
      'it needs SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID and 256 bits in base64url; secrets are sealed with the key derived from JWT_SECRET',
  ];
}

/** The settings holding JSON, how each is read, and what it must be. */
const JSON_SETTINGS: Array<[name: string, read: (text: string) => unknown, shape: string]> = [
  ['SMTP_HEADERS', parseSmtpHeaders, 'a JSON object of header name → list of values'],
  ['MAILER_EMAIL_VALIDATION_SERVICE_HEADERS', parseSmtpHeaders, 'a JSON object of header name → list of values'],
  ['MAILER_EMAIL_VALIDATION_BLOCKED_MX', parseBlockedMx, 'a JSON array of host names'],
];

/** As the original: a JSON setting that cannot be read is ignored, with a warning. */
function ignoreUnreadableJson(flat: Record<string, unknown>, given: Map<string, string>): string[] {
  const warnings: string[] = [];
  for (const [name, read, shape] of JSON_SETTINGS) {
    if (!flat[name] || read(flat[name] as string)) continue;
    flat[name] = '';
    warnings.push(`${variableOf(given, name)}: not ${shape}; ignored, as the original does`);
  }
  return warnings;
}

/**
 * Code lengths outside 6–10 become 6; a flow-state, MFA challenge or unverified-factor lifetime under 300 s
 * becomes 300 s; an MFA phone code interval of 0 becomes 60 s.
 */
function clampOtpLengthsAndFlowExpiry(flat: Record<string, unknown>, given: Map<string, string>): string[] {
  const warnings: string[] = [];
  for (const name of ['MAILER_OTP_LENGTH', 'SMS_OTP_LENGTH', 'MFA_PHONE_OTP_LENGTH']) {
    const length = flat[name] as number;
    if (length >= 6 && length <= 10) continue;
    flat[name] = 6;
    warnings.push(`${variableOf(given, name)}: ${length} is outside 6–10; using 6, as the original does`);
  }
  for (const name of ['EXTERNAL_FLOW_STATE_EXPIRY_DURATION', 'MFA_CHALLENGE_EXPIRY_DURATION', 'MFA_FACTOR_EXPIRY_DURATION']) {
    if ((flat[name] as number) >= 300) continue;
    warnings.push(`${variableOf(given, name)}: ${String(flat[name])} s is under 300 s; using 300 s, as the original does`);
    flat[name] = 300;
  }
  // Read as a float there but applied as whole seconds (time.Duration truncates): a challenge's
  // expires_at is a whole number of seconds, which typed clients decode as an integer.
  flat.MFA_CHALLENGE_EXPIRY_DURATION = Math.trunc(flat.MFA_CHALLENGE_EXPIRY_DURATION as number);
  if (flat.MFA_PHONE_MAX_FREQUENCY === 0) {
    warnings.push(
      `${variableOf(given, 'MFA_PHONE_MAX_FREQUENCY')}: 0 would let codes go out back to back; using 60 s, as the original does`,
    );
    flat.MFA_PHONE_MAX_FREQUENCY = 60;
  }
  return warnings;
}
