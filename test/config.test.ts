// Configuration: precedence of the sources and names, conversions, and every validation path.
import t from 'tap';
import { existsSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, ConfigError } from '../dist/server/config/load.js';
import { runPortcullis } from './helpers/cli.js';
import { rejection } from './helpers/jwt.js';
import { createSecretKey } from 'node:crypto';
import { SignJWT } from 'jose';
import { createJwtService } from '../dist/server/auth/jwt.js';
import { parseGoInt, splitCharacterSets } from '../dist/server/config/convert.js';
import { misconfiguredProviders } from '../dist/server/providers/configured.js';
import { settingsBody } from '../dist/server/routes/settings.js';
import { buildKeySet, generateJwk } from '../dist/server/auth/keys.js';
import { createSmsSender } from '../dist/server/delivery/sms/index.js';
import { generateKeyPairSync } from 'node:crypto';
import { pino } from 'pino';
import { SMTPServer } from 'smtp-server';
import { smtpDelivery } from '../dist/server/delivery/mail/transport.js';

const PROD = {
  DATABASE_URL: 'postgres://u@db/x',
  AUTH_DB_DRIVER: 'postgres',
  AUTH_JWT_SECRET: 'a-secret-of-sufficient-length',
  AUTH_SITE_URL: 'https://app.example.com',
  AUTH_API_EXTERNAL_URL: 'https://auth.example.com',
};
const load = (env: Record<string, string>, envFile: string | null = null) => loadConfig({ env, envFile });
const problemsOf = (env: Record<string, string>, only?: 'database') => {
  try {
    loadConfig({ env, envFile: null, only });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
};

t.test("defaults are the spec's", async (t) => {
  const c = load({});
  t.equal(c.development, true);
  t.equal(c.api.port, 8081);
  t.equal(c.jwt.exp, 3600);
  t.equal(c.password.minLength, 6);
  t.equal(c.smtp.maxFrequencySeconds, 900);
  t.equal(c.sms.maxFrequencySeconds, 60);
  t.equal(c.db.namespace, 'auth');
  t.equal(c.db.maxPoolSize, 0);
  t.equal(c.workers.uvThreadpool, 4, "libuv's default threadpool size");
  t.equal(load({ UV_THREADPOOL_SIZE: '16' }).workers.uvThreadpool, 16);
  t.equal(c.workers.http, Math.max(1, os.availableParallelism() - 1), 'HTTP threads leave a core to the database and the kernel');
  t.equal(c.workers.crypto, Math.max(2, os.availableParallelism()), 'crypto threads: one per core, at least 2');
  t.equal(load({ AUTH_HTTP_WORKERS: '3' }).workers.http, 3, 'an explicit thread count is kept');
  t.same(c.jwt.adminRoles, ['service_role', 'supabase_admin']);
  t.equal(c.mailer.subjects.confirmation, 'Confirm Your Signup');
  t.equal(c.mailer.urlPaths.recovery, '/verify');
  t.equal(c.external.emailEnabled, true);
  t.equal(c.external.phoneEnabled, false);
  t.equal(c.siteUrl, 'http://localhost:3000', 'development default');
  t.equal(c.api.externalUrl, 'http://localhost:8081', 'development default follows the port');
  t.ok(Object.isFrozen(c) && Object.isFrozen(c.jwt) && Object.isFrozen(c.external.providers.github), 'deeply frozen');
});

t.test('AUTH_ wins over the unprefixed alias, which wins over GOTRUE_', async (t) => {
  t.equal(load({ AUTH_API_PORT: '1', PORT: '2', GOTRUE_API_PORT: '3' }).api.port, 1);
  t.equal(load({ PORT: '2' }).api.port, 2);
  t.equal(load({ GOTRUE_API_PORT: '3' }).api.port, 3);
  t.equal(load({ GOTRUE_JWT_EXP: '60' }).jwt.exp, 60, 'GOTRUE_ names are accepted');
  t.equal(load({ ...PROD, DATABASE_URL: 'postgres://u@a/b', AUTH_DB_DATABASE_URL: 'postgres://u@c/d' }).db.url, 'postgres://u@c/d');
  t.equal(load({ OTEL_SERVICE_NAME: 'ours', GOTRUE_OTEL_SERVICE_NAME: 'theirs' }).tracing.serviceName, 'ours');
});

t.test('DATABASE_URL: a postgres:// URL or libpq keyword/value pairs (test/database-url.test.ts connects with both)', async (t) => {
  const keywords = "host=db port=5432 user=supabase_auth_admin password='a b' dbname=postgres sslmode=require";
  t.equal(load({ ...PROD, DATABASE_URL: keywords }).db.url, keywords);
  t.equal(load({ ...PROD, AUTH_DB_MIGRATIONS_DATABASE_URL: keywords }).db.migrationsUrl, keywords);
  t.same(problemsOf({ ...PROD, DATABASE_URL: 'mysql://u@db/x' }), ['DATABASE_URL: "mysql://u@db/x" is not in the expected format']);
  // A refused value is shown without its password: the message goes to stderr and the logs.
  t.same(problemsOf({ ...PROD, DATABASE_URL: 'mysql://u:hunter2@db/x' }), [
    'DATABASE_URL: "mysql://u:***@db/x" is not in the expected format',
  ]);
  t.same(problemsOf({ ...PROD, DATABASE_URL: "mysql password='hunter 2' host=db" }), [
    'DATABASE_URL: "mysql password=*** host=db" is not in the expected format',
  ]);
});

t.test('where the original reads a bare name only as its fallback, its GOTRUE_ name wins over it, as there', async (t) => {
  // A platform sets PORT and DATABASE_URL for every app; the operator's GOTRUE_ settings must still hold.
  const c = load({
    ...PROD,
    PORT: '8080',
    GOTRUE_API_PORT: '9999',
    DATABASE_URL: 'postgres://platform/app',
    GOTRUE_DB_DATABASE_URL: 'postgres://supabase_auth_admin@db/postgres',
    LOG_LEVEL: 'debug',
    GOTRUE_LOG_LEVEL: 'warn',
    RP_ID: 'other.example',
    GOTRUE_WEBAUTHN_RP_ID: 'example.com',
  });
  t.equal(c.api.port, 9999);
  t.equal(c.db.url, 'postgres://supabase_auth_admin@db/postgres');
  t.equal(c.log.level, 'warn');
  t.equal(c.webauthn.rpId, 'example.com');
  t.equal(load({ ...PROD, RP_ID: 'example.org' }).webauthn.rpId, 'example.org', 'the bare RP_ID alone is read, as there');
  t.equal(load({ ...PROD, AUTH_API_PORT: '1', GOTRUE_API_PORT: '9999', PORT: '8080' }).api.port, 1, 'AUTH_ still first');
});

t.test("a bare SECRETS is every hook's secrets where its own are unset, as the original's loader reads it", async (t) => {
  const [one, two, own] = ['A', 'B', 'C'].map((c) => `v1,whsec_${c.repeat(44)}`);
  const c = load({ ...PROD, SECRETS: `${one}||${two}`, GOTRUE_HOOK_SEND_EMAIL_SECRETS: own, AUTH_HOOK_SEND_SMS_SECRETS: own });
  t.same(c.hooks.customAccessToken.secrets, [one, two], "split at | with blanks dropped, as the hooks' own");
  for (const hook of ['mfaVerificationAttempt', 'passwordVerificationAttempt', 'beforeUserCreated', 'afterUserCreated'] as const)
    t.same(c.hooks[hook].secrets, [one, two], hook);
  t.same(c.hooks.sendEmail.secrets, [own], 'GOTRUE_HOOK_<NAME>_SECRETS wins');
  t.same(c.hooks.sendSms.secrets, [own], 'AUTH_HOOK_<NAME>_SECRETS wins');
  // The original merges its sources before it reads a name: a hook's own secrets in .env beat SECRETS in the environment.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cfg-'));
  writeFileSync(path.join(dir, '.env'), `GOTRUE_HOOK_SEND_EMAIL_SECRETS=${own}\n`);
  t.same(load({ ...PROD, SECRETS: one }, path.join(dir, '.env')).hooks.sendEmail.secrets, [own]);
  // Checked only for a hook that is called over HTTP(S), as there, and then named by the variable it came from.
  t.same(problemsOf({ ...PROD, SECRETS: 'not-a-secret' }), [], 'no HTTP hook: not checked');
  t.same(problemsOf({ ...PROD, SECRETS: 'not-a-secret', GOTRUE_HOOK_SEND_EMAIL_URI: 'https://hooks.example.com/mail' }), [
    'SECRETS: 1 secret(s) not of the form v1,whsec_<base64> (separate several with |)',
  ]);
});

t.test('the environment wins over .env, and .env is read', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cfg-'));
  const file = path.join(dir, '.env');
  writeFileSync(file, 'AUTH_JWT_EXP=120\nAUTH_SITE_URL=https://from-file.example\nGOTRUE_MAILER_AUTOCONFIRM=true\n');
  const fromFile = load({}, file);
  t.equal(fromFile.jwt.exp, 120);
  t.equal(fromFile.siteUrl, 'https://from-file.example');
  t.equal(fromFile.mailer.autoconfirm, true);
  t.equal(load({ AUTH_JWT_EXP: '30' }, file).jwt.exp, 30, 'environment beats the file');
  t.equal(load({ GOTRUE_JWT_EXP: '45' }, file).jwt.exp, 45, 'any environment name beats the file');
});

t.test('conversions: booleans, integers, lists, maps, send limits, durations in both forms', async (t) => {
  const c = load({
    AUTH_DISABLE_SIGNUP: 'TRUE',
    AUTH_MAILER_AUTOCONFIRM: '1',
    AUTH_EXTERNAL_EMAIL_ENABLED: 'false',
    AUTH_URI_ALLOW_LIST: 'https://a.example/*, https://*.b.example ,',
    AUTH_JWT_ADMIN_ROLES: 'admin,ops',
    AUTH_SMS_TEST_OTP: '+15551234567:123456, +49 151 12345678:654321',
    AUTH_RATE_LIMIT_EMAIL_SENT: '10/1m',
    AUTH_RATE_LIMIT_SMS_SENT: '7',
    AUTH_SMTP_MAX_FREQUENCY: '1h30m',
    AUTH_SMS_MAX_FREQUENCY: '90',
    AUTH_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: '10s',
    AUTH_MAILER_OTP_EXP: '1500ms',
  });
  t.equal(c.disableSignup, true);
  t.equal(c.mailer.autoconfirm, true);
  t.equal(c.external.emailEnabled, false);
  t.same(c.uriAllowList, ['https://a.example/*', 'https://*.b.example']);
  t.same(c.jwt.adminRoles, ['admin', 'ops']);
  t.same(c.sms.testOtp, { '15551234567': '123456', '4915112345678': '654321' });
  t.same(c.rateLimit.emailSent, { max: 10, periodSeconds: 60, bucket: true });
  t.same(c.rateLimit.smsSent, { max: 7, periodSeconds: 3600, bucket: false });
  t.equal(c.smtp.maxFrequencySeconds, 5400);
  t.equal(c.sms.maxFrequencySeconds, 90);
  t.equal(c.security.refreshTokenReuseIntervalSeconds, 10);
  t.equal(c.mailer.otpExpSeconds, 1.5);
});

t.test('the per-client limits and MFA numbers the original reads as floats take fractions, so its environments still start', async (t) => {
  const c = load({
    ...PROD,
    GOTRUE_RATE_LIMIT_PASSKEY: '2.5',
    GOTRUE_RATE_LIMIT_WEB3: '0.5',
    GOTRUE_RATE_LIMIT_TOKEN_REFRESH: '150.5',
    GOTRUE_RATE_LIMIT_VERIFY: '.5',
    GOTRUE_RATE_LIMIT_OTP: '1e1',
    GOTRUE_RATE_LIMIT_ANONYMOUS_USERS: '30.5',
    GOTRUE_RATE_LIMIT_SSO: '3.5',
    GOTRUE_RATE_LIMIT_O_AUTH_DYNAMIC_CLIENT_REGISTER: '7.5',
    GOTRUE_SAML_RATE_LIMIT_ASSERTION: '1.5',
    GOTRUE_MFA_RATE_LIMIT_CHALLENGE_AND_VERIFY: '0.25',
    GOTRUE_MFA_MAX_ENROLLED_FACTORS: '2.5',
    GOTRUE_MFA_CHALLENGE_EXPIRY_DURATION: '600.5',
  });
  t.strictSame(c.warnings, []);
  t.match(c.rateLimit, {
    passkey: 2.5,
    web3: 0.5,
    tokenRefresh: 150.5,
    verify: 0.5,
    otp: 10,
    anonymousUsers: 30.5,
    sso: 3.5,
    oauthClientRegister: 7.5,
    samlAssertion: 1.5,
    mfaChallengeAndVerify: 0.25,
  });
  t.equal(c.mfa.maxEnrolledFactors, 2.5);
  t.equal(
    c.mfa.challengeExpirySeconds,
    600,
    "read as a float, applied as whole seconds, as the original (a challenge's expires_at is an integer)",
  );
  t.same(problemsOf({ AUTH_RATE_LIMIT_PASSKEY: '-1' }), ['AUTH_RATE_LIMIT_PASSKEY: "-1" must be >= 0']);
});

t.test('password rules: the minimum is at least 6, sets split on colons with \\: escapes', async (t) => {
  t.equal(load({ AUTH_PASSWORD_MIN_LENGTH: '4' }).password.minLength, 6);
  t.same(load({ AUTH_PASSWORD_REQUIRED_CHARACTERS: 'abc:ABC:0123456789' }).password.requiredCharacters, ['abc', 'ABC', '0123456789']);
  t.same(splitCharacterSets('ab\\:c:DE'), ['ab:c', 'DE']);
  t.same(splitCharacterSets('a::b:'), ['a', 'b'], 'empty sets are dropped');
  // The original's TestPasswordRequiredCharactersDecode, and its rules where escapes follow each other or end the value.
  const cases: Array<[string, string[]]> = [
    ['a:b:c', ['a', 'b', 'c']],
    ['a\\:b:c', ['a:b', 'c']],
    ['a:b\\:c', ['a', 'b:c']],
    ['\\:a:b:c', [':a', 'b', 'c']],
    ['a:b:c\\:', ['a', 'b', 'c:']],
    ['a\\:b\\:c', ['a:b\\', 'c']],
    ['ab:c\\', ['ab', 'c\\']],
  ];
  for (const [value, sets] of cases) t.same(splitCharacterSets(value), sets, value);
});

t.test("whole numbers in Go's syntax, as the original reads them: prefixes, octal, underscores, a sign", async (t) => {
  const exp = (value: string) => load({ ...PROD, GOTRUE_JWT_EXP: value }).jwt.exp;
  t.strictSame(['0x10', '1_000', '+5', '0600', '0o17', '0b101', '0x_1F'].map(exp), [16, 1000, 5, 384, 15, 5, 31]);
  for (const bad of ['08', '1__0', '_1', '1_', '0x', '1e3', '1.0']) {
    t.same(problemsOf({ GOTRUE_JWT_EXP: bad }), [`GOTRUE_JWT_EXP: "${bad}" is not a whole number`], bad);
  }
});

t.test('a number past 64 bits stops the start, as ParseInt and ParseFloat refuse it there, not an endless value', async (t) => {
  const exp = (value: string) => load({ ...PROD, GOTRUE_JWT_EXP: value }).jwt.exp;
  t.equal(exp('9223372036854775807'), 2 ** 63, 'the largest int64 is still a number of seconds');
  t.equal(parseGoInt('-0x8000000000000000'), -(2 ** 63), 'and the smallest, in hex');
  const outOfRange = (name: string, value: string) => `${name}: "${value}" is out of range (a 64-bit number, as the original reads it)`;
  for (const big of [
    '9223372036854775808',
    '99999999999999999999',
    '0x8000000000000000',
    '-9223372036854775809',
    '01000000000000000000000',
  ]) {
    t.same(problemsOf({ GOTRUE_JWT_EXP: big }), [outOfRange('GOTRUE_JWT_EXP', big)], big);
  }
  for (const big of ['1e400', '-1e400', '1' + '0'.repeat(400)]) {
    t.same(problemsOf({ GOTRUE_RATE_LIMIT_VERIFY: big }), [outOfRange('GOTRUE_RATE_LIMIT_VERIFY', big)], `a rate of ${big}`);
    t.same(problemsOf({ GOTRUE_RATE_LIMIT_EMAIL_SENT: big }), [outOfRange('GOTRUE_RATE_LIMIT_EMAIL_SENT', big)], `a send limit of ${big}`);
  }
  t.equal(load({ ...PROD, GOTRUE_RATE_LIMIT_VERIFY: '+30' }).rateLimit.verify, 30, 'a signed rate is a number, as ParseFloat reads it');
  t.strictSame(load({ ...PROD, GOTRUE_RATE_LIMIT_EMAIL_SENT: '4503599627370495/1h' }).rateLimit.emailSent, {
    max: 4503599627370495,
    periodSeconds: 3600,
    bucket: true,
  });
  t.same(problemsOf({ GOTRUE_RATE_LIMIT_EMAIL_SENT: '4503599627370496/1h' }), [
    'GOTRUE_RATE_LIMIT_EMAIL_SENT: "4503599627370496/1h" counts more than 4503599627370495 events',
  ]);
});

t.test('secrets, credentials and texts are used as given; numbers, switches and URLs are trimmed', async (t) => {
  // A Kubernetes Secret made from a file often ends in a line break: the original signs with it.
  const secret = 'a-secret-of-sufficient-length\n';
  const c = load({ ...PROD, AUTH_JWT_SECRET: secret, AUTH_JWT_EXP: ' 60 ', AUTH_SITE_URL: ' https://app.example.com\n' });
  t.equal(c.jwt.secret, secret);
  t.equal(c.jwt.exp, 60);
  t.equal(c.siteUrl, 'https://app.example.com');
  const jwt = createJwtService(c.jwt);
  const signed = (key: string) =>
    new SignJWT({ sub: 'x' }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(createSecretKey(Buffer.from(key)));
  t.match(await jwt.verify(await signed(secret)), { sub: 'x' }, 'a token signed with exactly the secret verifies');
  t.match(await rejection(jwt.verify(await signed(secret.trim()))), 'signature is invalid', 'one signed with it trimmed does not');

  const other = load({
    ...PROD,
    AUTH_SMTP_PASS: ' pass ',
    AUTH_SMS_TWILIO_AUTH_TOKEN: 'token\n',
    AUTH_EXTERNAL_GITHUB_SECRET: 'gh-secret ',
    AUTH_PASSWORD_REQUIRED_CHARACTERS: ' ',
    AUTH_MAILER_SUBJECTS_INVITE: ' You are invited ',
  });
  t.equal(other.smtp.pass, ' pass ');
  t.equal(other.sms.twilio.authToken, 'token\n');
  t.equal(other.external.providers.github.secret, 'gh-secret ');
  t.same(other.password.requiredCharacters, [' '], 'a password must hold a space, as in the original');
  t.equal(other.mailer.subjects.invite, ' You are invited ');
});

t.test('production requires the required settings, and names every one', async (t) => {
  t.same(problemsOf({ DATABASE_URL: 'postgres://u@db/x' }), [
    'AUTH_SITE_URL: is required when DATABASE_URL is set',
    'AUTH_API_EXTERNAL_URL: is required when DATABASE_URL is set',
    'AUTH_JWT_SECRET: is required when DATABASE_URL is set and JWT_KEYS is not',
    'AUTH_DB_DRIVER: is required when DATABASE_URL is set (must be postgres)',
  ]);
  t.equal(load(PROD).development, false);
  t.equal(load(PROD).jwt.secret, PROD.AUTH_JWT_SECRET);
});

t.test('each kind of bad value is reported with the variable that carried it', async (t) => {
  const cases: Array<[Record<string, string>, string]> = [
    [{ AUTH_DISABLE_SIGNUP: 'maybe' }, 'AUTH_DISABLE_SIGNUP: "maybe" is not a boolean (use true or false)'],
    [{ AUTH_JWT_EXP: '1h' }, 'AUTH_JWT_EXP: "1h" is not a whole number'],
    [{ AUTH_JWT_EXP: '-1' }, 'AUTH_JWT_EXP: "-1" must be >= 0'],
    [{ PORT: '70000' }, 'PORT: "70000" must be <= 65535'],
    // The hashes the service makes must stay within what its own sign-ins verify.
    [{ AUTH_PASSWORD_HASH_MEMORY_KIB: '262145' }, 'AUTH_PASSWORD_HASH_MEMORY_KIB: "262145" must be <= 262144'],
    [
      { AUTH_PASSWORD_HASH_MEMORY_KIB: '262144', AUTH_PASSWORD_HASH_TIME_COST: '5' },
      'AUTH_PASSWORD_HASH_TIME_COST: PASSWORD_HASH_MEMORY_KIB × PASSWORD_HASH_TIME_COST must be at most 1048576 (1 GiB over its passes), the most a sign-in verifies',
    ],
    [{ AUTH_SMTP_MAX_FREQUENCY: 'soon' }, 'AUTH_SMTP_MAX_FREQUENCY: "soon" is not a duration (seconds like 900, or 15m, 1h30m)'],
    [{ AUTH_RATE_LIMIT_EMAIL_SENT: 'lots' }, 'AUTH_RATE_LIMIT_EMAIL_SENT: "lots" is not a limit (N per hour, or N/duration like 10/1m)'],
    [{ AUTH_RATE_LIMIT_EMAIL_SENT: '5/never' }, 'AUTH_RATE_LIMIT_EMAIL_SENT: "5/never" has an invalid period "never"'],
    [{ AUTH_SMS_TEST_OTP: '123' }, 'AUTH_SMS_TEST_OTP: "123" is not a key:value pair'],
    // The original's loader refuses both: a third half, and an empty pair.
    [{ AUTH_SMS_TEST_OTP: '15551234567:123456:789' }, 'AUTH_SMS_TEST_OTP: "15551234567:123456:789" is not a key:value pair'],
    [{ AUTH_SMS_TEST_OTP: '15551234567:123456,' }, 'AUTH_SMS_TEST_OTP: "15551234567:123456," has an empty pair (a stray comma)'],
    [{ AUTH_SITE_URL: 'not a url' }, 'AUTH_SITE_URL: "not a url" is not an absolute URL'],
    [{ GOTRUE_EXTERNAL_REDIRECTURL: '/callback' }, 'GOTRUE_EXTERNAL_REDIRECTURL: "/callback" is not an absolute URL'],
    [{ DB_NAMESPACE: 'Bad-Name' }, 'DB_NAMESPACE: "Bad-Name" is not in the expected format'],
    [{ ...PROD, AUTH_DB_DRIVER: 'mysql' }, 'AUTH_DB_DRIVER: "mysql" must be one of postgres'],
    [{ AUTH_SMTP_HOST: 'mail.example' }, 'AUTH_SMTP_ADMIN_EMAIL: is required when SMTP_HOST is set (it is the From address)'],
    [{ AUTH_SECURITY_CAPTCHA_ENABLED: 'true' }, 'AUTH_SECURITY_CAPTCHA_SECRET: is required when SECURITY_CAPTCHA_ENABLED is true'],
    [
      { AUTH_SMS_TEST_OTP_VALID_UNTIL: 'tomorrow' },
      'AUTH_SMS_TEST_OTP_VALID_UNTIL: "tomorrow" is not a time (use RFC 3339, like 2030-01-01T00:00:00Z)',
    ],
  ];
  for (const [env, expected] of cases) t.same(problemsOf(env), [expected], expected);

  // An enabled provider without its credentials starts: it is named in a warning and treated as disabled.
  const keycloak = { AUTH_EXTERNAL_KEYCLOAK_ENABLED: 'true', AUTH_EXTERNAL_KEYCLOAK_CLIENT_ID: 'id' };
  t.same(problemsOf(keycloak), [], 'an enabled provider without credentials does not stop start-up');
  t.same(misconfiguredProviders(load(keycloak)), ['keycloak: missing OAuth secret'], 'it is named for the start-up warning');
  t.equal((settingsBody(load(keycloak)).external as Record<string, boolean>).keycloak, false, '/settings shows it disabled');
  const complete = { ...keycloak, AUTH_EXTERNAL_KEYCLOAK_SECRET: 's', AUTH_EXTERNAL_KEYCLOAK_REDIRECT_URI: 'https://a.test/callback' };
  t.same(misconfiguredProviders(load(complete)), ['keycloak: missing realm URL (EXTERNAL_KEYCLOAK_URL)']);
  const usable = load({ ...complete, AUTH_EXTERNAL_KEYCLOAK_URL: 'https://kc.test/realms/r' });
  t.same(misconfiguredProviders(usable), []);
  t.equal((settingsBody(usable).external as Record<string, boolean>).keycloak, true);
  t.equal(problemsOf({ AUTH_JWT_EXP: 'x', AUTH_DISABLE_SIGNUP: 'y', PORT: 'z' }).length, 3, 'all problems at once');
});

t.test('0 where the original reads it as its default starts with that default, and a warning', async (t) => {
  const c = load({
    ...PROD,
    GOTRUE_JWT_EXP: '0',
    GOTRUE_MAILER_OTP_EXP: '0',
    GOTRUE_SMS_OTP_EXP: '0',
    GOTRUE_INTERNAL_HTTP_TIMEOUT: '0',
    GOTRUE_API_MAX_REQUEST_DURATION: '0',
  });
  t.strictSame(
    [c.jwt.exp, c.mailer.otpExpSeconds, c.sms.otpExpSeconds, c.external.httpTimeoutSeconds],
    [3600, 86400, 60, 10],
    "the original's defaults",
  );
  t.equal(c.api.maxRequestDurationSeconds, 86400, 'no deadline in the original: a day here');
  t.strictSame(c.warnings, [
    'GOTRUE_JWT_EXP: 0 means the default, 3600 s, as the original does',
    'GOTRUE_MAILER_OTP_EXP: 0 means the default, 86400 s, as the original does',
    'GOTRUE_SMS_OTP_EXP: 0 means the default, 60 s, as the original does',
    'GOTRUE_INTERNAL_HTTP_TIMEOUT: 0 means the default, 10 s, as the original does',
    'GOTRUE_API_MAX_REQUEST_DURATION: the original sets no request deadline for 0 or less; requests here may take up to a day',
  ]);
  t.equal(load({ ...PROD, GOTRUE_API_MAX_REQUEST_DURATION: '-5s' }).api.maxRequestDurationSeconds, 86400, 'less than 0 too');
  const kept = load({ ...PROD, GOTRUE_JWT_EXP: '60', GOTRUE_API_MAX_REQUEST_DURATION: '30s' });
  t.strictSame([kept.jwt.exp, kept.api.maxRequestDurationSeconds, kept.warnings], [60, 30, []], 'other values are kept');
});

// Past 2^31 - 1 ms Node fires a timer at once and PostgreSQL refuses the session's statement_timeout: the
// service started, then refused every request. The original's Go timers take such values.
t.test('a timeout or interval longer than the longest timer is read as that timer, with a warning', async (t) => {
  const c = load({
    ...PROD,
    GOTRUE_DB_ACQUIRE_TIMEOUT: '1000h',
    GOTRUE_DB_STATEMENT_TIMEOUT: '1000h',
    GOTRUE_SEND_TIMEOUT: '3600000',
    GOTRUE_API_MAX_REQUEST_DURATION: '1000h',
    OTEL_METRIC_EXPORT_INTERVAL: '3000000000',
  });
  t.strictSame(
    [
      c.db.acquireTimeoutSeconds,
      c.db.statementTimeoutSeconds,
      c.api.sendTimeoutSeconds,
      c.api.maxRequestDurationSeconds,
      c.metrics.exportIntervalMs,
    ],
    [2147483, 2147483, 2147483, 2147483, 2147483647],
  );
  t.strictSame(c.warnings, [
    'GOTRUE_API_MAX_REQUEST_DURATION: 3600000 s is longer than the longest timer kept here; read as 2147483 s (24.8 days)',
    'GOTRUE_DB_ACQUIRE_TIMEOUT: 3600000 s is longer than the longest timer kept here; read as 2147483 s (24.8 days)',
    'GOTRUE_DB_STATEMENT_TIMEOUT: 3600000 s is longer than the longest timer kept here; read as 2147483 s (24.8 days)',
    'GOTRUE_SEND_TIMEOUT: 3600000 s is longer than the longest timer kept here; read as 2147483 s (24.8 days)',
    'OTEL_METRIC_EXPORT_INTERVAL: 3000000000 ms is longer than the longest timer kept here; read as 2147483647 ms',
  ]);
  const kept = load({ ...PROD, GOTRUE_DB_ACQUIRE_TIMEOUT: '596h', GOTRUE_SESSIONS_TIMEBOX: '1000h' });
  t.strictSame(
    [kept.db.acquireTimeoutSeconds, kept.sessions.timeboxSeconds, kept.warnings],
    [2145600, 3600000, []],
    'shorter ones, and intervals that are no timer, are kept',
  );
});

t.test('a duration past what Go can hold (about 292 years) is refused, as the original refuses it', async (t) => {
  t.throws(() => load({ ...PROD, GOTRUE_SESSIONS_TIMEBOX: '9999999999h' }), /GOTRUE_SESSIONS_TIMEBOX: "9999999999h" is not a duration/);
  t.equal(load({ ...PROD, GOTRUE_SESSIONS_TIMEBOX: '2562047h' }).sessions.timeboxSeconds, 2562047 * 3600, 'the longest Go holds');
});

t.test('a send interval of 0 is one minute, as the original: the per-user throttle of mails and SMS never goes away', async (t) => {
  const c = load({ ...PROD, GOTRUE_SMTP_MAX_FREQUENCY: '0', GOTRUE_SMS_MAX_FREQUENCY: '0s' });
  t.strictSame([c.smtp.maxFrequencySeconds, c.sms.maxFrequencySeconds], [60, 60]);
  t.strictSame(c.warnings, [
    'GOTRUE_SMTP_MAX_FREQUENCY: 0 would let mails to one user go out back to back; using 60 s, as the original does',
    'GOTRUE_SMS_MAX_FREQUENCY: 0 would let SMS to one user go out back to back; using 60 s, as the original does',
  ]);
  const short = load({ ...PROD, GOTRUE_SMTP_MAX_FREQUENCY: '10s', GOTRUE_SMS_MAX_FREQUENCY: '1ms' });
  t.strictSame(
    [short.smtp.maxFrequencySeconds, short.sms.maxFrequencySeconds, short.warnings],
    [10, 0.001, []],
    'others are used as given',
  );
});

t.test('send limits as the original reads its rates: any number per hour (its whole part), a zero period is an hour', async (t) => {
  const limit = (value: string) => load({ ...PROD, GOTRUE_RATE_LIMIT_EMAIL_SENT: value }).rateLimit.emailSent;
  // The original's TestRateDecode, and its limiter's whole part and fallback period.
  t.strictSame(limit('1800'), { max: 1800, periodSeconds: 3600, bucket: false });
  t.strictSame(limit('1800.0'), { max: 1800, periodSeconds: 3600, bucket: false });
  t.strictSame(limit('13.5'), { max: 13, periodSeconds: 3600, bucket: false });
  t.strictSame(limit('2.5'), { max: 2, periodSeconds: 3600, bucket: false });
  t.strictSame(limit('3600/1h'), { max: 3600, periodSeconds: 3600, bucket: true });
  t.strictSame(limit('3600/1h0m0s'), { max: 3600, periodSeconds: 3600, bucket: true });
  t.strictSame(limit('100/24h'), { max: 100, periodSeconds: 86400, bucket: true });
  t.strictSame(limit('0/1h'), { max: 0, periodSeconds: 3600, bucket: true });
  t.strictSame(limit('10/0s'), { max: 10, periodSeconds: 3600, bucket: true }, 'a zero period is an hour');
  t.strictSame(load({ ...PROD, GOTRUE_RATE_LIMIT_SMS_SENT: '7.9' }).rateLimit.smsSent, { max: 7, periodSeconds: 3600, bucket: false });
  for (const bad of ['1h', '/', '/1h', '3600.0/1h', '100/', '1/2/3s']) {
    t.equal(problemsOf({ GOTRUE_RATE_LIMIT_EMAIL_SENT: bad }).length, 1, `${bad} is refused, as there`);
  }
});

t.test('JWT_KEYS the original accepts start: an empty list, sign-only keys, short or small keys, a kid given twice', async (t) => {
  const keys = (jwks: unknown[], extra: Record<string, string> = {}) => load({ ...PROD, GOTRUE_JWT_KEYS: JSON.stringify(jwks), ...extra });
  const empty = keys([]);
  t.strictSame([empty.jwt.keys, empty.warnings], [[], []], '[] is no keys: JWT_SECRET signs');
  t.equal(createJwtService(empty.jwt).algorithm, 'HS256');

  const ec = generateJwk('ES256');
  const signOnly = keys([{ ...ec, key_ops: ['sign'] }]);
  const jwt = createJwtService(signOnly.jwt);
  const token = await jwt.sign({ sub: 'x', role: 'authenticated' } as never);
  t.equal((await jwt.verify(token)).sub, 'x', 'a sign-only key verifies with its public half, as there');

  const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ format: 'jwk' });
  t.strictSame(keys([{ ...rsa, kid: 'small', alg: 'RS256', key_ops: ['sign', 'verify'] }]).warnings, [
    'GOTRUE_JWT_KEYS: key "small": an RSA key of 1024 bits can be broken; use at least 2048',
  ]);

  const later = generateJwk('ES256');
  const twice = keys([
    { ...ec, kid: 'same' },
    { ...later, kid: 'same' },
  ]);
  t.strictSame(twice.warnings, [
    'GOTRUE_JWT_KEYS: key "same": kid is used by more than one key; the last of them is used, as the original does',
  ]);
  const [kept] = buildKeySet(twice.jwt.keys);
  t.equal(buildKeySet(twice.jwt.keys).length, 1);
  t.equal(kept.publicJwk?.x, later.x, 'the later key, as there');

  const methods = load({ ...PROD, GOTRUE_JWT_VALID_METHODS: 'HS256,PS256' });
  t.same(methods.jwt.validMethods, ['HS256', 'PS256']);
  t.match(methods.warnings, [/^GOTRUE_JWT_VALID_METHODS: PS256 is no algorithm Portcullis verifies/]);
});

t.test('values the original starts with, or reads only while their feature is on, start here too', async (t) => {
  const starts = (env: Record<string, string>) => load({ ...PROD, ...env });
  t.same(problemsOf({ ...PROD, GOTRUE_SMS_PROVIDER: 'Twilio' }), [], 'an unknown gateway: starts');
  const twilio = starts({ GOTRUE_SMS_PROVIDER: 'Twilio' });
  t.match(twilio.warnings, [/^GOTRUE_SMS_PROVIDER: "Twilio" is none of twilio, /]);
  const sender = createSmsSender(twilio.sms, 10, pino({ enabled: false }));
  await t.rejects(sender!.send('15550001111', 'x', 'sms', '123456'), /Twilio could not be found/, 'and fails when it sends');

  const longSecret = `v1,whsec_${'A'.repeat(91)}`;
  t.same(
    problemsOf({ ...PROD, GOTRUE_HOOK_SEND_SMS_URI: 'https://hooks.example.com/sms', GOTRUE_HOOK_SEND_SMS_SECRETS: longSecret }),
    [],
    'a symmetric hook secret longer than 88 characters',
  );

  const encryption = starts({ GOTRUE_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY: 'not-a-key' });
  t.equal(encryption.security.dbEncryption.encryptionKey, '', 'with ENCRYPT off an unusable key is ignored');
  t.match(encryption.warnings, [/^GOTRUE_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY: ignored, as the original ignores it/]);
  t.equal(
    problemsOf({ ...PROD, GOTRUE_SECURITY_DB_ENCRYPTION_ENCRYPT: 'true', GOTRUE_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY: 'not-a-key' })
      .length,
    2,
    'with ENCRYPT on it is checked, as there',
  );

  t.same(problemsOf({ ...PROD, GOTRUE_WEBAUTHN_RP_ID: 'example.com:443', GOTRUE_SAML_EXTERNAL_URL: 'auth.example.com' }), []);
  t.same(problemsOf({ ...PROD, RP_ID: 'a/b', OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4317' }), [], 'features off: not read');
  // With passkeys on, an RP id with a port still starts, as there: every ceremony fails, and the start says so.
  t.same(problemsOf({ ...PROD, GOTRUE_PASSKEY_ENABLED: 'true', GOTRUE_WEBAUTHN_RP_ID: 'example.com:443' }), []);
  const ported = starts({ GOTRUE_PASSKEY_ENABLED: 'true', GOTRUE_WEBAUTHN_RP_ID: 'example.com:443' }).warnings;
  t.ok(
    ported.some((w) => w.startsWith('GOTRUE_WEBAUTHN_RP_ID: "example.com:443" is no relying party id')),
    'the port is named at start',
  );
  t.same(problemsOf({ ...PROD, GOTRUE_TRACING_ENABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4317' }), [
    'OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4317" is not in the expected format',
  ]);
  t.ok(
    problemsOf({ ...PROD, GOTRUE_SAML_ENABLED: 'true', GOTRUE_SAML_EXTERNAL_URL: 'auth.example.com' }).includes(
      'GOTRUE_SAML_EXTERNAL_URL: "auth.example.com" is not in the expected format',
    ),
    'with SAML on it is checked',
  );

  t.equal(starts({ GOTRUE_PASSWORD_MIN_LENGTH: '-1' }).password.minLength, 6);
  t.equal(starts({ GOTRUE_PASSWORD_MIN_LENGTH: '100' }).password.minLength, 100);
  t.equal(starts({ GOTRUE_PASSWORD_HIBP_BLOOM_ITEMS: '20000000' }).password.hibp.bloom.items, 20_000_000);
  const debug = starts({ GOTRUE_DEBUG: 'verbose' });
  t.equal(debug.debug, false);
  t.strictSame(debug.warnings, ['GOTRUE_DEBUG: "verbose" is not a boolean; false']);
  t.equal(starts({ GOTRUE_DEBUG: 'TRUE' }).debug, true);
});

t.test('the CLI stops with one message naming every bad variable and exit code 1, no stack trace', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cfg-cli-'));
  const run = runPortcullis(['serve'], {
    cwd: dir,
    env: { PATH: process.env.PATH, DATABASE_URL: 'postgres://u@db/x', AUTH_JWT_EXP: 'soon', AUTH_DB_DRIVER: 'postgres' },
  });
  t.equal(run.status, 1);
  t.match(run.stderr, /invalid configuration/);
  t.match(run.stderr, /AUTH_JWT_EXP: "soon" is not a whole number/);
  t.match(run.stderr, /AUTH_SITE_URL: is required/);
  t.match(run.stderr, /AUTH_JWT_SECRET: is required/);
  t.notMatch(run.stderr, /\bat .*\.js:\d+/, 'no stack trace');
});

t.test('version command', async (t) => {
  const run = runPortcullis(['version'], { env: process.env });
  t.equal(run.status, 0);
  t.match(run.stdout.split('\n')[0], /^\d+\.\d+\.\d+$/, 'the bare version on the first line');
  t.match(run.stdout, /^schema \d+ \(sql\/\d{5}_\w+\.sql\)$/m, 'and the schema version it knows');
});

t.test("the original's command names: `auth` and `gotrue` (as the image links them), or as the first argument", async (t) => {
  const expected = runPortcullis(['version'], { env: process.env }).stdout;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cmd-names-'));
  for (const name of ['auth', 'gotrue']) {
    symlinkSync(path.resolve('bin/auth'), path.join(dir, name));
    const linked = spawnSync(path.join(dir, name), ['version'], { encoding: 'utf8', timeout: 60_000 });
    t.equal(linked.status, 0, `${name} version: ${linked.stderr}`);
    t.equal(linked.stdout, expected, `${name} runs portcullis`);
    // An overridden container command (`command: ["auth", "version"]`) reaches the entrypoint as arguments.
    t.equal(runPortcullis([name, 'version'], { env: process.env }).stdout, expected, `portcullis ${name} version`);
  }
});

t.test('the database timeouts: defaults, seconds or Go durations, and their bounds', async (t) => {
  const c = load({});
  t.strictSame(
    {
      acquire: c.db.acquireTimeoutSeconds,
      statement: c.db.statementTimeoutSeconds,
      idle: c.db.idleInTransactionTimeoutSeconds,
      waiters: c.db.poolWaitersPerConnection,
    },
    { acquire: 3, statement: 5, idle: 10, waiters: 100 },
  );
  const set = load({
    AUTH_DB_ACQUIRE_TIMEOUT: '500ms',
    AUTH_DB_STATEMENT_TIMEOUT: '2',
    GOTRUE_DB_IDLE_IN_TRANSACTION_TIMEOUT: '1m',
    AUTH_DB_POOL_WAITERS_PER_CONNECTION: '0',
  });
  t.strictSame(
    [set.db.acquireTimeoutSeconds, set.db.statementTimeoutSeconds, set.db.idleInTransactionTimeoutSeconds, set.db.poolWaitersPerConnection],
    [0.5, 2, 60, 0],
  );
  t.equal(load({ AUTH_DB_STATEMENT_TIMEOUT: '0' }).db.statementTimeoutSeconds, 0, '0 turns the server-side limit off');
  t.strictSame(problemsOf({ AUTH_DB_ACQUIRE_TIMEOUT: '0' }), ['AUTH_DB_ACQUIRE_TIMEOUT: "0" must be > 0']);
  t.strictSame(problemsOf({ AUTH_DB_STATEMENT_TIMEOUT: 'soon' }), [
    'AUTH_DB_STATEMENT_TIMEOUT: "soon" is not a duration (seconds like 900, or 15m, 1h30m)',
  ]);
});

t.test(
  'values the original starts with start here: a short JWT_SECRET (warned about), any TRACING_EXPORTER, an unknown METRICS_EXPORTER',
  async (t) => {
    const short = load({ ...PROD, AUTH_JWT_SECRET: '', GOTRUE_JWT_SECRET: 'testsecret' });
    t.equal(short.jwt.secret, 'testsecret', 'the secret the deployment signs with is used');
    t.match(short.warnings, [/^GOTRUE_JWT_SECRET: only 10 characters, which can be guessed/]);
    t.notOk(
      load({ ...PROD, AUTH_JWT_SECRET: 'x'.repeat(16) }).warnings.some((w) => w.includes('JWT_SECRET')),
      '16 or more: no warning',
    );
    // the original's own test configuration sets TRACING_EXPORTER=default; it reads no value of it
    t.equal(load({ ...PROD, GOTRUE_TRACING_EXPORTER: 'default' }).tracing.exporter, 'default');
    const unknown = load({ ...PROD, GOTRUE_METRICS_ENABLED: 'true', GOTRUE_METRICS_EXPORTER: 'statsd' });
    t.equal(unknown.metrics.exporter, 'none', 'nothing is exported, as the original exports nothing for it');
    t.match(unknown.warnings, [/^GOTRUE_METRICS_EXPORTER: "statsd" is neither opentelemetry nor prometheus; no metrics are exported/]);
    t.equal(load({ ...PROD, GOTRUE_METRICS_EXPORTER: 'prometheus' }).metrics.exporter, 'prometheus');
  },
);

t.test(
  'LOG_SQL: none by default; statement and all as given, all with a warning; anything else logs nothing, as the original',
  async (t) => {
    t.equal(load(PROD).log.sql, 'none');
    const statement = load({ ...PROD, GOTRUE_LOG_SQL: 'statement' });
    t.equal(statement.log.sql, 'statement');
    t.notOk(
      statement.warnings.some((w) => w.includes('LOG_SQL')),
      'statements alone carry no values: no warning',
    );
    const all = load({ ...PROD, GOTRUE_LOG_SQL: 'all' });
    t.equal(all.log.sql, 'all');
    t.match(all.warnings, [/^GOTRUE_LOG_SQL: every statement is logged with its values/]);
    const other = load({ ...PROD, AUTH_LOG_SQL: 'ALL' });
    t.equal(other.log.sql, 'none', 'the original compares the value as written');
    t.match(other.warnings, [/^AUTH_LOG_SQL: "ALL" is none of none, statement, all; no statement is logged/]);
  },
);

t.test("Supabase's self-hosted stack: its auth service's environment, with the optional lines filled in, loads as meant", async (t) => {
  // The auth service's environment in supabase/supabase's docker/docker-compose.yml, with docker/.env.example's
  // values, then the lines it leaves commented out for an operator to fill in.
  const compose: Record<string, string> = {
    GOTRUE_API_HOST: '0.0.0.0',
    GOTRUE_API_PORT: '9999',
    API_EXTERNAL_URL: 'http://localhost:8000',
    GOTRUE_DB_DRIVER: 'postgres',
    GOTRUE_DB_DATABASE_URL: 'postgres://supabase_auth_admin:a-long-postgres-password@db:5432/postgres',
    GOTRUE_SITE_URL: 'http://localhost:3000',
    GOTRUE_URI_ALLOW_LIST: '',
    GOTRUE_DISABLE_SIGNUP: 'false',
    GOTRUE_JWT_ADMIN_ROLES: 'service_role',
    GOTRUE_JWT_AUD: 'authenticated',
    GOTRUE_JWT_DEFAULT_GROUP_NAME: 'authenticated',
    GOTRUE_JWT_EXP: '3600',
    GOTRUE_JWT_SECRET: 'your-super-secret-jwt-token-with-at-least-32-characters-long',
    GOTRUE_EXTERNAL_EMAIL_ENABLED: 'true',
    GOTRUE_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'false',
    GOTRUE_MAILER_AUTOCONFIRM: 'false',
    GOTRUE_SMTP_ADMIN_EMAIL: 'admin@example.com',
    GOTRUE_SMTP_HOST: 'supabase-mail',
    GOTRUE_SMTP_PORT: '2500',
    GOTRUE_SMTP_USER: 'fake_mail_user',
    GOTRUE_SMTP_PASS: 'fake_mail_password',
    GOTRUE_SMTP_SENDER_NAME: 'fake_sender',
    GOTRUE_MAILER_URLPATHS_INVITE: '/auth/v1/verify',
    GOTRUE_MAILER_URLPATHS_CONFIRMATION: '/auth/v1/verify',
    GOTRUE_MAILER_URLPATHS_RECOVERY: '/auth/v1/verify',
    GOTRUE_MAILER_URLPATHS_EMAIL_CHANGE: '/auth/v1/verify',
    GOTRUE_EXTERNAL_PHONE_ENABLED: 'true',
    GOTRUE_SMS_AUTOCONFIRM: 'true',
  };
  const stack = load(compose);
  t.strictSame(stack.warnings, [], 'no warning');
  t.match(stack, {
    api: { port: 9999 },
    db: { url: compose.GOTRUE_DB_DATABASE_URL },
    jwt: { adminRoles: ['service_role'], exp: 3600 },
    smtp: { host: 'supabase-mail', port: 2500 },
  });
  t.equal(stack.development, false, 'a database URL given: not the development setup');

  const filledIn = load({
    ...compose,
    GOTRUE_MAILER_SECURE_EMAIL_CHANGE_ENABLED: 'true',
    GOTRUE_SMTP_MAX_FREQUENCY: '1s',
    GOTRUE_EXTERNAL_GOOGLE_ENABLED: 'true',
    GOTRUE_EXTERNAL_GOOGLE_CLIENT_ID: 'google-client',
    GOTRUE_EXTERNAL_GOOGLE_SECRET: 'google-secret',
    GOTRUE_EXTERNAL_GOOGLE_REDIRECT_URI: 'http://localhost:8000/auth/v1/callback',
    GOTRUE_SMS_PROVIDER: 'twilio',
    GOTRUE_SMS_OTP_EXP: '60',
    GOTRUE_SMS_OTP_LENGTH: '6',
    GOTRUE_SMS_MAX_FREQUENCY: '60s',
    GOTRUE_SMS_TEMPLATE: 'Your code is {{ .Code }}',
    GOTRUE_SMS_TWILIO_ACCOUNT_SID: 'AC0123',
    GOTRUE_SMS_TWILIO_AUTH_TOKEN: 'twilio-token',
    GOTRUE_SMS_TWILIO_MESSAGE_SERVICE_SID: 'MG0123',
    GOTRUE_MFA_PHONE_ENROLL_ENABLED: 'true',
    GOTRUE_MFA_PHONE_VERIFY_ENABLED: 'true',
    GOTRUE_MFA_MAX_ENROLLED_FACTORS: '10',
    GOTRUE_HOOK_CUSTOM_ACCESS_TOKEN_ENABLED: 'true',
    GOTRUE_HOOK_CUSTOM_ACCESS_TOKEN_URI: 'pg-functions://postgres/public/custom_access_token_hook',
    GOTRUE_HOOK_SEND_EMAIL_ENABLED: 'false',
    GOTRUE_HOOK_SEND_EMAIL_URI: 'http://host.docker.internal:54321/functions/v1/email_sender',
    GOTRUE_HOOK_SEND_EMAIL_SECRETS: 'v1,whsec_VGhpcyBpcyBhbiBleGFtcGxlIG9mIGEgc2hvcnRlciBCYXNlNjQgc3RyaW5n',
    // The compose file offers it as a switch; the original reads it nowhere (only per provider), so neither do we.
    GOTRUE_EXTERNAL_SKIP_NONCE_CHECK: 'true',
  });
  t.strictSame(filledIn.warnings, ['ignoring settings Portcullis does not know or support: GOTRUE_EXTERNAL_SKIP_NONCE_CHECK']);
  t.match(filledIn, {
    external: { providers: { google: { enabled: true, clientId: 'google-client' } } },
    sms: { provider: 'twilio', otpExpSeconds: 60, maxFrequencySeconds: 60 },
    hooks: { customAccessToken: { enabled: true, uri: 'pg-functions://postgres/public/custom_access_token_hook' } },
  });
});

t.test("the original's names as its loader derives them from its fields, where they differ from the documented ones", async (t) => {
  // Its loader (envconfig) names a field by its tag under its section's prefix, and splits words only where
  // told: these are the names the original itself reads, besides ours.
  const c = load({
    ...PROD,
    GOTRUE_EXTERNAL_REDIRECTURL: 'https://app.example.com/after',
    GOTRUE_RATE_LIMIT_O_AUTH_DYNAMIC_CLIENT_REGISTER: '7',
    GOTRUE_API_REQUEST_ID_HEADER: 'X-Request-Id',
    GOTRUE_DB_DB_NAMESPACE: 'auth2',
    GOTRUE_METRICS_OTEL_EXPORTER_PROMETHEUS_HOST: '127.0.0.1',
    GOTRUE_METRICS_OTEL_EXPORTER_PROMETHEUS_PORT: '9464',
  });
  t.strictSame(c.warnings, [], 'all of them known');
  t.match(c, {
    external: { redirectUrl: 'https://app.example.com/after' },
    rateLimit: { oauthClientRegister: 7 },
    api: { requestIdHeader: 'X-Request-Id' },
    db: { namespace: 'auth2' },
    metrics: { prometheusHost: '127.0.0.1', prometheusPort: 9464 },
  });
  t.equal(
    load({ ...PROD, GOTRUE_API_REQUEST_ID_HEADER: 'X-Primary', REQUEST_ID_HEADER: 'X-Alternative' }).api.requestIdHeader,
    'X-Primary',
    "as in the original, the section's name comes before the bare one",
  );
});

t.test("the original's settings it reads nowhere are accepted quietly; those it reads and we do not are still named", async (t) => {
  const quiet = load({
    ...PROD,
    GOTRUE_LOG_DISABLE_COLORS: 'true',
    GOTRUE_LOG_QUOTE_EMPTY_FIELDS: 'true',
    GOTRUE_LOG_TSFORMAT: '2006-01-02',
    GOTRUE_TRACING_HOST: 'jaeger',
    GOTRUE_TRACING_PORT: '6831',
    GOTRUE_TRACING_SERVICE_NAME: 'gotrue',
    GOTRUE_TRACING_TAGS: 'env:prod',
    GOTRUE_DB_MIGRATIONS_PATH: '/usr/local/etc/auth/migrations',
    GOTRUE_DB_HEALTH_CHECK_PERIOD: '30s',
    GOTRUE_MAILER_URLPATHS_MAGIC_LINK: '/auth/v1/verify',
    GOTRUE_MAILER_URLPATHS_REAUTHENTICATION: '/auth/v1/verify',
    GOTRUE_MAILER_URLPATHS_PASSWORD_CHANGED_NOTIFICATION: '/auth/v1/verify',
  });
  t.strictSame(quiet.warnings, []);
  const named = load({ ...PROD, GOTRUE_INDEX_WORKER_MAX_USERS_THRESHOLD: '1000', GOTRUE_PROFILER_ENABLED: 'true' });
  t.strictSame(named.warnings, [
    'ignoring settings Portcullis does not know or support: GOTRUE_INDEX_WORKER_MAX_USERS_THRESHOLD, GOTRUE_PROFILER_ENABLED',
  ]);
});

t.test("the fetched mail templates' limits and the pool's connection lifetimes, by the original's names", async (t) => {
  const defaults = load(PROD);
  t.strictSame(
    defaults.mailer.templateCache,
    { maxBytes: 1_000_000, maxAgeSeconds: 600, retryIntervalSeconds: 10 },
    "the original's defaults",
  );
  t.match(defaults.db, { connMaxIdleTimeSeconds: 0, connMaxLifetimeSeconds: 0 });
  const given = load({
    ...PROD,
    GOTRUE_MAILER_TEMPLATE_MAX_SIZE: '50000',
    GOTRUE_MAILER_TEMPLATE_MAX_AGE: '1m',
    GOTRUE_MAILER_TEMPLATE_RETRY_INTERVAL: '2s',
    GOTRUE_DB_CONN_MAX_IDLE_TIME: '30s',
    GOTRUE_DB_CONN_MAX_LIFETIME: '1h',
  });
  t.strictSame(given.warnings, []);
  t.strictSame(given.mailer.templateCache, { maxBytes: 50_000, maxAgeSeconds: 60, retryIntervalSeconds: 2 });
  t.match(given.db, { connMaxIdleTimeSeconds: 30, connMaxLifetimeSeconds: 3600 });
  t.strictSame(
    defaults.db.advisor,
    { enabled: true, samplingIntervalSeconds: 0.2, observationIntervalSeconds: 20 },
    "the pool advisor: the original's defaults",
  );
  const advisor = load({ ...PROD, GOTRUE_DB_ADVISOR_SAMPLING_INTERVAL: '500ms', GOTRUE_DB_ADVISOR_OBSERVATION_INTERVAL: '1m' });
  t.strictSame(advisor.warnings, []);
  t.strictSame(advisor.db.advisor, { enabled: true, samplingIntervalSeconds: 0.5, observationIntervalSeconds: 60 });
  t.throws(
    () => load({ ...PROD, GOTRUE_DB_ADVISOR_SAMPLING_INTERVAL: '0s' }),
    /GOTRUE_DB_ADVISOR_SAMPLING_INTERVAL/,
    'no interval to sample at',
  );
  t.throws(() => load({ ...PROD, GOTRUE_DB_ADVISOR_OBSERVATION_INTERVAL: '-1s' }), /GOTRUE_DB_ADVISOR_OBSERVATION_INTERVAL/, 'no window');
  t.equal(
    load({ ...PROD, GOTRUE_DB_ADVISOR_ENABLED: 'false', GOTRUE_DB_ADVISOR_SAMPLING_INTERVAL: '0s' }).db.advisor.enabled,
    false,
    'with the advisor off its intervals are not checked, as the original reads them only then',
  );
  t.equal(load({ ...PROD, GOTRUE_DB_CONN_PERCENTAGE: '40' }).db.connPercentage, 40);
  const clamped = load({ ...PROD, GOTRUE_DB_CONN_PERCENTAGE: '150' });
  t.equal(clamped.db.connPercentage, 100, 'clamped into 0–100, as the original');
  t.strictSame(clamped.warnings, ['GOTRUE_DB_CONN_PERCENTAGE: 150 is outside 0–100; using 100, as the original does']);
  t.equal(load({ ...PROD, GOTRUE_DB_CONN_PERCENTAGE: '-5' }).db.connPercentage, 0);
});

t.test(
  "OTEL_EXPORTER_OTLP_PROTOCOL: one for both signals, or each its own under the original's names; another value is named and replaced",
  async (t) => {
    t.match(load({ ...PROD, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }), {
      tracing: { otlpProtocol: 'grpc' },
      metrics: { otlpProtocol: 'grpc' },
    });
    t.match(
      load({ ...PROD }),
      { tracing: { otlpProtocol: 'http/protobuf' }, metrics: { otlpProtocol: 'http/protobuf' } },
      "the original's default",
    );
    const split = load({
      ...PROD,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      GOTRUE_TRACING_OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      GOTRUE_METRICS_OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    });
    t.match(
      split,
      { tracing: { otlpProtocol: 'grpc' }, metrics: { otlpProtocol: 'http/protobuf' } },
      "each signal's own name first, as there",
    );
    t.strictSame(split.warnings, []);
    t.match(load({ ...PROD, AUTH_OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).tracing, {
      otlpProtocol: 'grpc',
    });

    const typo = load({
      ...PROD,
      GOTRUE_TRACING_ENABLED: 'true',
      GOTRUE_METRICS_ENABLED: 'true',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/proto',
    });
    t.strictSame(typo.warnings, [
      'OTEL_EXPORTER_OTLP_PROTOCOL: "http/proto" is none of http/protobuf, http/json, grpc; http/protobuf is spoken',
    ]);
    t.match(typo, { tracing: { otlpProtocol: 'http/protobuf' }, metrics: { otlpProtocol: 'http/protobuf' } });
    t.match(load({ ...PROD, GOTRUE_METRICS_ENABLED: 'true', GOTRUE_METRICS_OTEL_EXPORTER_OTLP_PROTOCOL: 'GRPC' }).warnings, [
      /^GOTRUE_METRICS_OTEL_EXPORTER_OTLP_PROTOCOL: "GRPC" is none of/,
    ]);
    t.strictSame(load({ ...PROD, OTEL_EXPORTER_OTLP_PROTOCOL: 'bogus' }).warnings, [], 'nothing exported: nothing to say');
    t.strictSame(
      load({ ...PROD, GOTRUE_METRICS_ENABLED: 'true', GOTRUE_METRICS_EXPORTER: 'prometheus', OTEL_EXPORTER_OTLP_PROTOCOL: 'bogus' })
        .warnings,
      [],
      'Prometheus is scraped, not pushed',
    );
  },
);

t.test(
  'passkey settings the original starts with start here: a limit of 0, a challenge expiry of 0, an RP id its library refuses',
  async (t) => {
    const RP = { GOTRUE_WEBAUTHN_RP_DISPLAY_NAME: 'Example', GOTRUE_WEBAUTHN_RP_ORIGINS: 'https://example.com' };
    const frozen = load({
      ...PROD,
      ...RP,
      GOTRUE_PASSKEY_ENABLED: 'true',
      GOTRUE_PASSKEY_MAX_PASSKEYS_PER_USER: '0',
      RP_ID: 'example.com',
    });
    t.equal(frozen.passkey.maxPerUser, 0, 'no new passkey: 422 at registration, as there');
    t.strictSame(frozen.warnings, [], 'a plausible setting: no warning');
    t.equal(load({ ...PROD, GOTRUE_PASSKEY_MAX_PASSKEYS_PER_USER: '-1' }).passkey.maxPerUser, -1);

    const expired = load({
      ...PROD,
      ...RP,
      GOTRUE_PASSKEY_ENABLED: 'true',
      RP_ID: 'example.com',
      GOTRUE_WEBAUTHN_CHALLENGE_EXPIRY_DURATION: '0',
    });
    t.equal(expired.webauthn.challengeExpirySeconds, 0);
    t.match(expired.warnings, [/^GOTRUE_WEBAUTHN_CHALLENGE_EXPIRY_DURATION: 0 s; every passkey challenge has expired when it is answered/]);
    t.equal(load({ ...PROD, GOTRUE_WEBAUTHN_CHALLENGE_EXPIRY_DURATION: '500ms' }).webauthn.challengeExpirySeconds, 0.5);
    t.strictSame(load({ ...PROD, GOTRUE_WEBAUTHN_CHALLENGE_EXPIRY_DURATION: '0' }).warnings, [], 'passkeys off: nothing to say');

    const ported = load({ ...PROD, ...RP, GOTRUE_MFA_WEB_AUTHN_ENROLL_ENABLED: 'true', GOTRUE_WEBAUTHN_RP_ID: 'localhost:3000' });
    t.equal(ported.webauthn.rpId, 'localhost:3000');
    t.match(ported.warnings, [/^GOTRUE_WEBAUTHN_RP_ID: "localhost:3000" is no relying party id: it is not a bare domain .*answers 500/]);
    for (const id of ['https://example.com', 'example.com/app', 'intranet']) {
      t.equal(load({ ...PROD, ...RP, GOTRUE_PASSKEY_ENABLED: 'true', RP_ID: id }).warnings.length, 1, `${id}: warned about`);
    }
    for (const id of ['localhost', 'auth.example.com', '127.0.0.1', '::1']) {
      t.strictSame(load({ ...PROD, ...RP, GOTRUE_PASSKEY_ENABLED: 'true', RP_ID: id }).warnings, [], `${id}: taken`);
    }
    t.strictSame(load({ ...PROD, RP_ID: 'localhost:3000' }).warnings, [], 'WebAuthn off: nothing to say');
  },
);

t.test('a problem found across settings names the variable that was given, not its AUTH_ name', async (t) => {
  t.same(problemsOf({ ...PROD, GOTRUE_SAML_ENABLED: 'true', GOTRUE_SAML_PRIVATE_KEY: 'not*base64' }), [
    'GOTRUE_SAML_PRIVATE_KEY: SAML private key not in standard Base64 format',
  ]);
  t.same(problemsOf({ ...PROD, GOTRUE_HOOK_SEND_EMAIL_URI: 'http://hooks.example.com/mail' }), [
    'GOTRUE_HOOK_SEND_EMAIL_URI: only localhost, 127.0.0.1 and ::1 are supported with http (use https)',
  ]);
  t.same(problemsOf({ ...PROD, GOTRUE_SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS: 'k1:short' }), [
    'GOTRUE_SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS: key "k1" must be 256 bits in base64url',
  ]);
  t.same(
    problemsOf({ ...PROD, GOTRUE_SMTP_HOST: 'mail.example' }),
    ['AUTH_SMTP_ADMIN_EMAIL: is required when SMTP_HOST is set (it is the From address)'],
    'a variable not given at all is named by its AUTH_ name',
  );
});

t.test("an enabled provider's URL that is no http(s) URL stops the start, naming it (/authorize would answer 500)", async (t) => {
  const keycloak = {
    GOTRUE_EXTERNAL_KEYCLOAK_ENABLED: 'true',
    GOTRUE_EXTERNAL_KEYCLOAK_CLIENT_ID: 'id',
    GOTRUE_EXTERNAL_KEYCLOAK_SECRET: 's',
    GOTRUE_EXTERNAL_KEYCLOAK_REDIRECT_URI: 'https://auth.example.com/callback',
  };
  t.same(problemsOf({ ...PROD, ...keycloak, GOTRUE_EXTERNAL_KEYCLOAK_URL: 'keycloak.example.com/realms/x' }), [
    'GOTRUE_EXTERNAL_KEYCLOAK_URL: "keycloak.example.com/realms/x" is not an http:// or https:// URL (such as https://keycloak.example.com)',
  ]);
  // Every provider's URL and API URL, whatever the provider.
  t.same(
    problemsOf({
      ...PROD,
      AUTH_EXTERNAL_GITLAB_ENABLED: 'true',
      AUTH_EXTERNAL_GITLAB_URL: 'gitlab.example.com',
      AUTH_EXTERNAL_WORKOS_ENABLED: 'true',
      AUTH_EXTERNAL_WORKOS_API_URL: 'ftp://api.workos.example',
    }),
    [
      'AUTH_EXTERNAL_GITLAB_URL: "gitlab.example.com" is not an http:// or https:// URL (such as https://gitlab.example.com)',
      'AUTH_EXTERNAL_WORKOS_API_URL: "ftp://api.workos.example" is not an http:// or https:// URL (such as https://workos.example.com)',
    ],
  );
  t.same(problemsOf({ ...PROD, GOTRUE_EXTERNAL_KEYCLOAK_URL: 'keycloak.example.com/realms/x' }), [], 'a disabled provider: never read');
  const usable = load({ ...PROD, ...keycloak, GOTRUE_EXTERNAL_KEYCLOAK_URL: 'http://localhost:8080/realms/x/' });
  t.equal(usable.external.providers.keycloak.url, 'http://localhost:8080/realms/x/', 'http for a local provider, as before');
});

t.test('SMTP_HOST must be a host alone and SMTP_PORT a port: the original dials "<host>:<port>" and every mail fails', async (t) => {
  const mail = { ...PROD, AUTH_SMTP_ADMIN_EMAIL: 'admin@example.com' };
  const hostProblem = (host: string) =>
    `AUTH_SMTP_HOST: "${host}" is not a host name or IP address: give the host alone (mail.example.com), without a scheme or path, ` +
    'its port in SMTP_PORT and an IPv6 address in brackets ([2001:db8::1])';
  for (const host of ['smtp://mail.example.com', 'mail.example.com:25', 'mail.example.com/relay', '::1']) {
    t.same(problemsOf({ ...mail, AUTH_SMTP_HOST: host }), [hostProblem(host)], host);
  }
  for (const host of ['mail.example.com', 'supabase_mail', 'inbucket', '10.0.0.5', '[2001:db8::1]', 'mail.example.com.']) {
    t.same(problemsOf({ ...mail, AUTH_SMTP_HOST: host }), [], `${host}: taken`);
  }
  // nodemailer would send to 587 instead, where the original fails every mail.
  t.same(problemsOf({ ...mail, AUTH_SMTP_HOST: 'mail.example.com', GOTRUE_SMTP_PORT: '0' }), [
    'GOTRUE_SMTP_PORT: 0 is no port to send mail to; use 1–65535 (587 or 465, usually)',
  ]);
  t.same(problemsOf({ ...PROD, GOTRUE_SMTP_PORT: '0' }), [], 'without SMTP_HOST no mail server is dialled: not read');
});

t.test('an IPv6 SMTP_HOST in brackets, as the original takes it, is where mail goes', async (t) => {
  const received: string[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      received.push(session.envelope.rcptTo.map((r) => r.address).join());
      stream.resume().on('end', () => callback());
    },
  });
  const listening = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(0, '::1', () => resolve(true));
  });
  if (!listening) return t.pass('no IPv6 loopback here: nothing to send to');
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.server.address() as { port: number }).port;
  const config = load({ ...PROD, AUTH_SMTP_HOST: '[::1]', AUTH_SMTP_PORT: String(port), AUTH_SMTP_ADMIN_EMAIL: 'admin@example.com' });
  const delivery = smtpDelivery(config.smtp, 5000, pino({ enabled: false }));
  t.teardown(() => delivery.close());
  const mail = { kind: 'confirmation', to: 'user@example.com', subject: 's', html: '<p>x</p>', text: 'x', link: '', code: '' };
  await delivery.deliver(mail);
  t.same(received, ['user@example.com']);
});

t.test('DATABASE_URL parameters pgx refuses to read stop the start, naming the parameter and never the password', async (t) => {
  const cases: Array<[Record<string, string>, string]> = [
    [
      { DATABASE_URL: 'postgres://u:pw@db/x?connect_timeout=abc' },
      'DATABASE_URL: cannot be read (connect_timeout "abc" is not a whole number of seconds (0 or more))',
    ],
    [
      { DATABASE_URL: 'postgres://u:pw@db/x?connect_timeout=-1' },
      'DATABASE_URL: cannot be read (connect_timeout "-1" is not a whole number of seconds (0 or more))',
    ],
    [
      { DATABASE_URL: "host=db user=u password='p w' connect_timeout=5s" },
      'DATABASE_URL: cannot be read (connect_timeout "5s" is not a whole number of seconds (0 or more))',
    ],
    [{ DATABASE_URL: 'host=db port=pg user=u password=pw' }, 'DATABASE_URL: cannot be read (port "pg" is not a port number (1–65535))'],
    [{ DATABASE_URL: 'postgres://u:pw@db:0/x' }, 'DATABASE_URL: cannot be read (port "0" is not a port number (1–65535))'],
    [{ DATABASE_URL: 'postgres://u:pw@db:abc/x' }, 'DATABASE_URL: cannot be read (Invalid URL)'],
    [
      { DATABASE_URL: 'postgres://u:pw@db/x?sslmode=on' },
      'DATABASE_URL: cannot be read (sslmode must be one of disable, allow, prefer, require, verify-ca, verify-full; got on)',
    ],
    // The files TLS names are read at start: one that cannot be read is named with the setting, not thrown bare.
    [
      { DATABASE_URL: 'postgres://u:pw@db/x?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem' },
      'DATABASE_URL: cannot be read (a certificate or key file cannot be read (/nonexistent/ca.pem): ENOENT)',
    ],
    [
      { DATABASE_URL: 'host=db user=u sslcert=/ sslkey=/' },
      'DATABASE_URL: cannot be read (a certificate or key file cannot be read: EISDIR)',
    ],
    [
      { DATABASE_URL: 'postgres://u:pw@db/x?sslmode=verify-ca' },
      'DATABASE_URL: cannot be read (sslmode=verify-ca needs sslrootcert, the CA to check the certificate with)',
    ],
    [
      { DATABASE_URL: 'postgres://u:pw@db/x?uselibpqcompat=true' },
      "DATABASE_URL: cannot be read (uselibpqcompat is node-postgres' own option, not a parameter libpq knows)",
    ],
    [
      { AUTH_DB_MIGRATIONS_DATABASE_URL: 'postgres://u:pw@db/x?connect_timeout=ten' },
      'AUTH_DB_MIGRATIONS_DATABASE_URL: cannot be read (connect_timeout "ten" is not a whole number of seconds (0 or more))',
    ],
  ];
  for (const [env, expected] of cases) {
    t.same(problemsOf({ ...PROD, ...env }), [expected], expected);
    t.same(problemsOf({ ...PROD, ...env }, 'database'), [expected], '`portcullis migrate` too');
  }
  for (const url of ['postgres://u:pw@db:6543/x?connect_timeout=10', 'host=db port=5432 connect_timeout=0 dbname=postgres']) {
    t.same(problemsOf({ ...PROD, DATABASE_URL: url }), [], url);
  }
});

t.test('a LOG_FILE that takes no log lines stops the start at once, naming it', async (t) => {
  const kernel = (file: string, where: string) =>
    `AUTH_LOG_FILE: "${file}" is a file of the kernel's ${where}, which takes no log lines; name a regular file, or leave it empty for stdout`;
  t.same(problemsOf({ ...PROD, AUTH_LOG_FILE: '/proc/self/mem' }), [kernel('/proc/self/mem', '/proc')]);
  t.same(problemsOf({ ...PROD, AUTH_LOG_FILE: '/proc/1/status' }).length, 1);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cfg-log-'));
  t.match(problemsOf({ ...PROD, AUTH_LOG_FILE: dir }), [
    new RegExp(`^AUTH_LOG_FILE: "${dir}" cannot be opened for appending log lines \\(EISDIR`),
  ]);
  const nested = path.join(dir, 'a', 'b', 'auth.log');
  t.same(problemsOf({ ...PROD, AUTH_LOG_FILE: nested }), [], 'a new file in new directories, as the logger makes them');
  t.ok(existsSync(nested));
  t.same(problemsOf({ ...PROD, AUTH_LOG_FILE: '/dev/null' }), [], 'a device');

  // A FIFO nothing reads: opening it to write would wait for a reader for good.
  const fifo = path.join(dir, 'fifo');
  if (spawnSync('mkfifo', [fifo]).status !== 0) return t.pass('no mkfifo here: no FIFO to try');
  t.match(problemsOf({ ...PROD, AUTH_LOG_FILE: fifo }), [/^AUTH_LOG_FILE: ".*fifo" cannot be opened for appending log lines \(ENXIO/]);
  const run = runPortcullis(['serve'], { cwd: dir, env: { PATH: process.env.PATH, ...PROD, AUTH_LOG_FILE: fifo } });
  t.equal(run.status, 1, 'the CLI stops');
  t.match(run.stderr, /AUTH_LOG_FILE: ".*fifo" cannot be opened for appending log lines/);
});

t.test('JWT_KEYS: when a kid shared by two keys hides the signing key, the refusal names that kid', async (t) => {
  const first = generateJwk('ES256');
  const later = generateJwk('ES256');
  const shadowed = [
    { ...first, kid: 'same' },
    { ...later, kid: 'same', key_ops: ['verify'] },
  ];
  t.same(problemsOf({ ...PROD, GOTRUE_JWT_KEYS: JSON.stringify(shadowed) }), [
    'GOTRUE_JWT_KEYS: exactly one key must have "sign" in key_ops (found 0); kid "same" is used by more than one key, ' +
      'of which only the last is kept, as in the original: give each key its own kid',
  ]);
  t.same(problemsOf({ ...PROD, GOTRUE_JWT_KEYS: JSON.stringify([first, later]) }), [
    `GOTRUE_JWT_KEYS: exactly one key must have "sign" in key_ops (found 2: ${first.kid}, ${later.kid})`,
  ]);
});
