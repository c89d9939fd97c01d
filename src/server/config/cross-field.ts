// The checks that need more than one setting (a URL required once DATABASE_URL is set, a key id for an
// encryption key, hooks that an HTTP call can keep waiting, ...), run by config/load.ts after each
// setting has passed its own. Each problem names the variable to fix. Combinations the original starts
// with (a gateway without credentials, WebAuthn without a relying party) are warnings instead.
import { hookEnvName, SMS_REQUIRED } from './settings.js';
import { HOOK_NAMES, OAUTH_PROVIDERS } from './types.js';
import { isIPv6 } from 'node:net';
import { hookTargetProblems } from '../hooks/targets.js';
import { HTTP_HOOK_TIMEOUT_MS } from '../hooks/http-transport.js';
import { SUPPORTED_ALGORITHMS, buildKeySet } from '../auth/keys.js';
import { KMS_ARN_MEMBER } from '../auth/kms-key.js';
import { checkGoTemplate, GoTemplateSyntaxError } from '../delivery/mail/go-template.js';
import { samlKeyProblem } from '../saml/key-check.js';
import { proxyAddress } from '../outbound-proxy/rules.js';
import { parseTimestamp } from '../go-time.js';
import { ARGON2_MAX_WORK_KIB } from '../../workers/password-formats.js';

/** The captcha providers there are; any other name stops start-up only while captcha is on, as the original. */
export const CAPTCHA_PROVIDERS = ['hcaptcha', 'turnstile'];

export function crossFieldProblems(flat: Record<string, unknown>, given: Map<string, string>, development: boolean): string[] {
  const problems: string[] = [];
  const named = (name: string) => variableOf(given, name);
  const require = (name: string, why: string) => {
    if (!flat[name]) problems.push(`${named(name)}: is required ${why}`);
  };
  if (!development) {
    for (const name of ['SITE_URL', 'API_EXTERNAL_URL']) require(name, 'when DATABASE_URL is set');
    // With JWT_KEYS the keys sign and verify; JWT_SECRET then only verifies kid-less tokens, if set.
    const keys = flat.JWT_KEYS;
    if (!Array.isArray(keys) || keys.length === 0) require('JWT_SECRET', 'when DATABASE_URL is set and JWT_KEYS is not');
    if (!given.has('DB_DRIVER')) problems.push('AUTH_DB_DRIVER: is required when DATABASE_URL is set (must be postgres)');
  }
  if (flat.SMTP_HOST) require('SMTP_ADMIN_EMAIL', 'when SMTP_HOST is set (it is the From address)');
  problems.push(...smtpServerProblems(flat, given));
  // Any scheme, as the original (an app's deep link); only a value no redirect could be built on is refused.
  for (const name of ['SITE_URL', 'EXTERNAL_REDIRECT_URL']) {
    const url = flat[name] as string;
    if (url && !URL.canParse(url)) problems.push(`${given.get(name) ?? `AUTH_${name}`}: "${url}" is not an absolute URL`);
  }
  // An enabled OAuth provider with missing credentials does not stop start-up: it is named in a warning and
  // treated as disabled (providers/configured.ts), as the original fails only at /authorize. Its URLs, given,
  // must be usable, though: no request could be built on them.
  problems.push(...providerUrlProblems(flat, given));
  // Read as the original reads it (Go's RFC 3339), not by Date.parse: a date alone or a time without a zone,
  // which the original refuses to start with, would otherwise pass, the latter read in the host's zone.
  const validUntil = flat.SMS_TEST_OTP_VALID_UNTIL as string;
  if (validUntil && parseTimestamp(validUntil) === null) {
    problems.push(`${given.get('SMS_TEST_OTP_VALID_UNTIL')}: "${validUntil}" is not a time (use RFC 3339, like 2030-01-01T00:00:00Z)`);
  }
  // The hashes made must stay within what a sign-in verifies (docs/passwords.md#imported-hash-formats).
  if (Number(flat.PASSWORD_HASH_MEMORY_KIB) * Number(flat.PASSWORD_HASH_TIME_COST) > ARGON2_MAX_WORK_KIB) {
    problems.push(
      `${named('PASSWORD_HASH_TIME_COST')}: PASSWORD_HASH_MEMORY_KIB × PASSWORD_HASH_TIME_COST must be at most ${ARGON2_MAX_WORK_KIB} (1 GiB over its passes), the most a sign-in verifies`,
    );
  }
  // WebAuthn switched on without a relying party does not stop start-up either (webauthnWarnings).
  if (flat.MAILER_AUTOCONFIRM && flat.MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS)
    problems.push(`${named('MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS')}: cannot be true together with MAILER_AUTOCONFIRM`);
  if (flat.SECURITY_CAPTCHA_ENABLED) require('SECURITY_CAPTCHA_SECRET', 'when SECURITY_CAPTCHA_ENABLED is true');
  if (flat.SECURITY_CAPTCHA_ENABLED && !CAPTCHA_PROVIDERS.includes(flat.SECURITY_CAPTCHA_PROVIDER as string)) {
    problems.push(`${named('SECURITY_CAPTCHA_PROVIDER')}: "${String(flat.SECURITY_CAPTCHA_PROVIDER)}" is not hcaptcha or turnstile`);
  }
  problems.push(...validMethodProblems(flat, given));
  problems.push(...kmsKeyProblems(flat, given));
  problems.push(...samlProblems(flat, given));
  problems.push(...hookProblems(flat, given));
  problems.push(...dbEncryptionProblems(flat, given));
  problems.push(...templateProblems(flat, given));
  problems.push(...proxyProblems(flat, given));
  return problems;
}

/**
 * An enabled provider's EXTERNAL_<PROVIDER>_URL and _API_URL must be http(s) URLs: every endpoint is built on
 * them. The original starts with `keycloak.example.com/realms/x` and then sends the browser to a relative
 * address; here /authorize would answer 500, so the start is refused instead (docs/settings.md#sign-in-methods).
 * A disabled provider's URLs are never read, as there.
 */
function providerUrlProblems(flat: Record<string, unknown>, given: Map<string, string>): string[] {
  return OAUTH_PROVIDERS.filter((provider) => flat[`EXTERNAL_${provider.toUpperCase()}_ENABLED`]).flatMap((provider) =>
    ['URL', 'API_URL']
      .map((suffix) => `EXTERNAL_${provider.toUpperCase()}_${suffix}`)
      .filter((name) => flat[name] && !isHttpUrl(flat[name] as string))
      .map(
        (name) =>
          `${variableOf(given, name)}: "${String(flat[name])}" is not an http:// or https:// URL (such as https://${provider}.example.com)`,
      ),
  );
}

function isHttpUrl(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const url = new URL(text);
  return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname !== '';
}

/**
 * The original dials `<SMTP_HOST>:<SMTP_PORT>` as one string, so a host with a scheme or a port of its own,
 * or port 0, starts there and fails every mail; here such a value stops the start (docs/settings.md#mail).
 * Only with SMTP_HOST set: without it no mail server is dialled, and SMTP_PORT is never read.
 */
function smtpServerProblems(flat: Record<string, unknown>, given: Map<string, string>): string[] {
  const host = flat.SMTP_HOST as string;
  if (!host) return [];
  const problems: string[] = [];
  if (!isSmtpHost(host))
    problems.push(
      `${variableOf(given, 'SMTP_HOST')}: "${host}" is not a host name or IP address: give the host alone (mail.example.com), ` +
        'without a scheme or path, its port in SMTP_PORT and an IPv6 address in brackets ([2001:db8::1])',
    );
  if (flat.SMTP_PORT === 0)
    problems.push(`${variableOf(given, 'SMTP_PORT')}: 0 is no port to send mail to; use 1–65535 (587 or 465, usually)`);
  return problems;
}

/** A DNS name (underscores too, as container names have them), an IPv4 address, or an IPv6 address in brackets. */
function isSmtpHost(host: string): boolean {
  if (host.startsWith('[') && host.endsWith(']')) return isIPv6(host.slice(1, -1));
  return /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.?$/.test(host);
}

/** A proxy this service cannot use stops the start (the original fails each call through it instead). */
function proxyProblems(flat: Record<string, unknown>, given: Map<string, string>): string[] {
  return ['HTTPS_PROXY', 'HTTP_PROXY'].flatMap((name) => {
    const address = flat[name] ? proxyAddress(flat[name] as string) : null;
    return typeof address === 'string' ? [`${variableOf(given, name)}: ${address}`] : [];
  });
}

/** The start-up warnings of combinations that do not stop the service; run after the development defaults. */
export function crossFieldWarnings(flat: Record<string, unknown>, given: Map<string, string>): string[] {
  return [...smsCredentialWarnings(flat, given), ...webauthnWarnings(flat, given)];
}

/**
 * The variable to name in a message about a setting: the one it was read from (GOTRUE_SAML_PRIVATE_KEY,
 * or `X (file)`), AUTH_X when it was not given.
 */
export function variableOf(given: Map<string, string>, name: string): string {
  return given.get(name) ?? `AUTH_${name}`;
}

/**
 * As the original: a gateway named with empty credentials does not stop the service; phone sign-ins
 * fail when a code is sent (docs/sms.md#gateways), and the start-up log says why in advance.
 */
function smsCredentialWarnings(flat: Record<string, unknown>, given: Map<string, string>): string[] {
  const gateway = flat.SMS_PROVIDER as string;
  if (gateway && !Object.hasOwn(SMS_REQUIRED, gateway)) {
    flat.SMS_MISSING_CREDENTIALS = [];
    return [
      `${variableOf(given, 'SMS_PROVIDER')}: "${gateway}" is none of ${Object.keys(SMS_REQUIRED).join(', ')}: sending SMS will fail, as in the original`,
    ];
  }
  const missing = gateway ? (SMS_REQUIRED[gateway] ?? []).filter((name) => !flat[name]) : [];
  flat.SMS_MISSING_CREDENTIALS = missing.map((name) => variableOf(given, name));
  if (missing.length === 0) return [];
  return [
    `${variableOf(given, 'SMS_PROVIDER')} is ${gateway} but ${missing.map((n) => variableOf(given, n)).join(', ')} ${missing.length > 1 ? 'are' : 'is'} empty: sending SMS will fail`,
  ];
}

/**
 * As the original since it stopped refusing to start (its deployments had MFA_WEB_AUTHN_* switched on
 * from the days a client sent the relying party itself): passkeys and WebAuthn factors switched on
 * without WEBAUTHN_RP_* start with a warning, and every ceremony is refused (webauthn/relying-party.ts).
 */
function webauthnWarnings(flat: Record<string, unknown>, given: Map<string, string>): string[] {
  const switchedOn = ['PASSKEY_ENABLED', 'MFA_WEB_AUTHN_ENROLL_ENABLED', 'MFA_WEB_AUTHN_VERIFY_ENABLED'].filter((name) => flat[name]);
  const missing = ['WEBAUTHN_RP_ID', 'WEBAUTHN_RP_DISPLAY_NAME', 'WEBAUTHN_RP_ORIGINS'].filter(
    (name) => !flat[name] || (Array.isArray(flat[name]) && flat[name].length === 0),
  );
  if (switchedOn.length === 0 || missing.length === 0) return [];
  return [
    `${switchedOn.map((n) => variableOf(given, n)).join(', ')} ${switchedOn.length > 1 ? 'are' : 'is'} true but ${missing.map((n) => variableOf(given, n)).join(', ')} ` +
      `${missing.length > 1 ? 'are' : 'is'} empty: every WebAuthn ceremony (passkeys, WebAuthn factors) is refused until they are set`,
  ];
}

/** With SAML on, its keys must be usable RSA keys (the original refuses to start otherwise; docs/sso-saml.md#settings). */
function samlProblems(flat: Record<string, unknown>, given: Map<string, string>): string[] {
  if (!flat.SAML_ENABLED) return [];
  const key = typeof flat.SAML_PRIVATE_KEY === 'string' ? flat.SAML_PRIVATE_KEY : '';
  const next = typeof flat.SAML_PRIVATE_KEY_NEXT === 'string' ? flat.SAML_PRIVATE_KEY_NEXT : '';
  const problems: string[] = [];
  if (!key) problems.push(`${variableOf(given, 'SAML_PRIVATE_KEY')}: is required when SAML_ENABLED is true`);
  const current = key ? samlKeyProblem(key, '') : null;
  if (current) problems.push(`${variableOf(given, 'SAML_PRIVATE_KEY')}: ${current}`);
  const upcoming = next ? samlKeyProblem(next, 'next ') : null;
  if (upcoming) problems.push(`${variableOf(given, 'SAML_PRIVATE_KEY_NEXT')}: ${upcoming}`);
  return problems;
}

/** Mail subjects and the SMS text are templates: one that does not parse would fail every send. */
function templateProblems(flat: Record<string, unknown>, given: Map<string, string>): string[] {
  return Object.keys(flat)
    .filter((name) => name.startsWith('MAILER_SUBJECTS_') || name === 'SMS_TEMPLATE')
    .flatMap((name) => {
      try {
        checkGoTemplate(typeof flat[name] === 'string' ? flat[name] : '');
        return [];
      } catch (err) {
        if (!(err instanceof GoTemplateSyntaxError)) throw err;
        return [`${variableOf(given, name)}: is not a valid template (${err.message})`];
      }
    });
}

/**
 * With ENCRYPT on, the key that encrypts secrets at rest needs an id; every decryption key must be 256 bits
 * (docs/mfa.md#secrets-at-rest). With it off the original ignores the encryption key (original-corrections.ts).
 */
function dbEncryptionProblems(flat: Record<string, unknown>, given: Map<string, string>): string[] {
  const problems: string[] = [];
  const encrypt = Boolean(flat.SECURITY_DB_ENCRYPTION_ENCRYPT);
  if (encrypt && flat.SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY && !flat.SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID)
    problems.push(
      `${variableOf(given, 'SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID')}: is required when SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY is set`,
    );
  if (flat.SECURITY_DB_ENCRYPTION_ENCRYPT && !flat.SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY)
    problems.push(`${variableOf(given, 'SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY')}: is required when SECURITY_DB_ENCRYPTION_ENCRYPT is true`);
  const keys = flat.SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS;
  if (keys && typeof keys === 'object' && !(keys instanceof Error)) {
    for (const [id, key] of Object.entries(keys as Record<string, string>)) {
      if (Buffer.from(key, 'base64url').length !== 32 || !/^[A-Za-z0-9_-]+$/.test(key))
        problems.push(`${variableOf(given, 'SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS')}: key "${id}" must be 256 bits in base64url`);
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

/**
 * JWT_KEYS whose only private parts are in AWS KMS (docs/tokens-and-sessions.md#aws-kms-signing-keys): refresh-token
 * children are derived from a local secret (sessions/child-token.ts), so JWT_SECRET is needed, as the original always
 * requires it; and a signature must be able to fail before the request's own deadline answers 504 for it.
 */
function kmsKeyProblems(flat: Record<string, unknown>, given: Map<string, string>): string[] {
  const keys = Array.isArray(flat.JWT_KEYS) ? (flat.JWT_KEYS as Array<Record<string, unknown>>) : [];
  if (!keys.some((k) => KMS_ARN_MEMBER in k)) return [];
  const problems: string[] = [];
  if (!flat.JWT_SECRET && !keys.some((k) => typeof k.d === 'string' || typeof k.k === 'string'))
    problems.push(
      `${variableOf(given, 'JWT_SECRET')}: is required when JWT_KEYS holds no private key (the AWS KMS key signs, refresh tokens are derived from it)`,
    );
  // 0 or less is no deadline (original-corrections.ts), which any KMS timeout is shorter than.
  const requestDuration = flat.API_MAX_REQUEST_DURATION as number;
  if (requestDuration > 0 && (flat.JWT_KMS_TIMEOUT as number) >= requestDuration)
    problems.push(`${variableOf(given, 'JWT_KMS_TIMEOUT')}: must be shorter than API_MAX_REQUEST_DURATION`);
  // A sign-in holds its transaction while KMS signs (sessions/issue.ts).
  const idle = flat.DB_IDLE_IN_TRANSACTION_TIMEOUT as number;
  if (idle > 0 && idle <= (flat.JWT_KMS_TIMEOUT as number))
    problems.push(`${variableOf(given, 'DB_IDLE_IN_TRANSACTION_TIMEOUT')}: must be longer than JWT_KMS_TIMEOUT (or 0)`);
  return problems;
}

/** Each enabled hook needs a URI; any URI must be one the transports can call, with well-formed secrets. */
function hookProblems(flat: Record<string, unknown>, given: Map<string, string>): string[] {
  const problems = HOOK_NAMES.flatMap((hook) => {
    const env = `HOOK_${hookEnvName(hook)}`;
    const uri = flat[`${env}_URI`] as string;
    if (flat[`${env}_ENABLED`] && !uri) return [`${variableOf(given, `${env}_URI`)}: is required when ${env}_ENABLED is true`];
    // Each problem starts with the setting's suffix (URI: or SECRETS:), named here by its variable.
    return hookTargetProblems(uri, flat[`${env}_SECRETS`] as string[]).map((problem) => {
      const suffix = problem.slice(0, problem.indexOf(':'));
      return `${variableOf(given, `${env}_${suffix}`)}${problem.slice(suffix.length)}`;
    });
  });
  // An HTTP hook may hold its request's transaction for its whole budget (docs/architecture.md#mail-and-sms-inside-the-transaction).
  const idle = flat.DB_IDLE_IN_TRANSACTION_TIMEOUT as number;
  const httpHook = HOOK_NAMES.some(
    (h) => flat[`HOOK_${hookEnvName(h)}_ENABLED`] && /^https?:/.test(String(flat[`HOOK_${hookEnvName(h)}_URI`])),
  );
  if (httpHook && idle > 0 && idle * 1000 <= HTTP_HOOK_TIMEOUT_MS) {
    problems.push(
      `${variableOf(given, 'DB_IDLE_IN_TRANSACTION_TIMEOUT')}: must be longer than an HTTP hook's ${HTTP_HOOK_TIMEOUT_MS / 1000} s (or 0)`,
    );
  }
  return problems;
}
