// The Portcullis instances the auth-js integration suite talks to, and the settings of each. The client's CI
// runs its tests against the auth server of `supabase start` (one instance behind the API gateway, configured
// by test/supabase/config.toml) and against four plain instances from infra/docker-compose.yml on fixed
// ports. These are our own choice of the service's settings (docs/settings.md) that stand for that
// configuration, each group with the tests that need it; the original's GOTRUE_ names are used on purpose,
// as the CLI and the compose file pass them. Keys and secrets come from the run (see auth-js-suite.mjs).
import { randomBytes, randomUUID } from 'node:crypto';

/** The ports the client's tests hard-code (docker) and the one behind the Kong stand-in (CLI). */
export const GATEWAY_PORT = 54321;
export const CLI_PORT = 54399;
export const DOCKER_PORTS = { autoconfirmOff: 9999, autoconfirmOn: 9998, signupDisabled: 9997, asymmetric: 9996 };

/**
 * `cliSecret` and `dockerSecret`: the HS256 secrets the tests sign their own tokens with (read from the
 * checkout); `signingKey`: the RSA private JWK the client's generate-signing-keys.js wrote, with which the
 * CLI-set tests sign their API keys and admin token; `smtpPort`: the sink's; `databases`: { cli, docker } URLs.
 */
export function authJsInstances({ cliSecret, dockerSecret, signingKey, smtpPort, databases }) {
  // Five instances on a small machine: a thread or two each is plenty for a suite run in band.
  const threads = (http) => ({ GOTRUE_HTTP_WORKERS: String(http), GOTRUE_CRYPTO_WORKERS: '2' });
  // Mail goes to the run's sink: the suite never reads it, but sign-ups, invites, OTPs and email changes
  // must be sent (and succeed) for their answers to be the original's.
  const mail = { GOTRUE_SMTP_HOST: '127.0.0.1', GOTRUE_SMTP_PORT: String(smtpPort), GOTRUE_SMTP_ADMIN_EMAIL: 'admin@example.com' };
  const database = (url) => ({ DATABASE_URL: url, GOTRUE_DB_DRIVER: 'postgres', DB_NAMESPACE: 'auth' });

  const external = `http://127.0.0.1:${GATEWAY_PORT}/auth/v1`;
  const cli = {
    name: 'cli',
    port: CLI_PORT,
    settings: {
      ...database(databases.cli),
      ...mail,
      ...threads(2),
      // Reached through the gateway's /auth/v1 prefix, so the public URL, the issuer and every mailed link
      // carry it, as behind Kong.
      PORT: String(CLI_PORT),
      GOTRUE_API_HOST: '127.0.0.1',
      API_EXTERNAL_URL: external,
      GOTRUE_JWT_ISSUER: external,
      GOTRUE_MAILER_URLPATHS_INVITE: `${external}/verify`,
      GOTRUE_MAILER_URLPATHS_CONFIRMATION: `${external}/verify`,
      GOTRUE_MAILER_URLPATHS_RECOVERY: `${external}/verify`,
      GOTRUE_MAILER_URLPATHS_EMAIL_CHANGE: `${external}/verify`,
      // The redirects the tests send (OAuth, magic links, the passkey page's origin) must be allowed.
      GOTRUE_SITE_URL: 'http://127.0.0.1:3000',
      GOTRUE_URI_ALLOW_LIST: 'https://127.0.0.1:3000,http://localhost:5173',
      // Tokens: the MFA tests sign HS256 tokens with the CLI's secret (getAuthenticatorAssuranceLevel with a
      // JWT); the API keys and the admin token are RS256 with the generated key, which also signs sessions
      // (getClaims and fetchJwk verify against /.well-known/jwks.json); service_role may use /admin.
      GOTRUE_JWT_SECRET: cliSecret,
      GOTRUE_JWT_KEYS: JSON.stringify([signingKey]),
      GOTRUE_JWT_VALID_METHODS: 'HS256,RS256',
      GOTRUE_JWT_ADMIN_ROLES: 'service_role',
      // What the CLI sets (both are empty by default, as the compose file's instances keep them).
      GOTRUE_JWT_AUD: 'authenticated',
      GOTRUE_JWT_DEFAULT_GROUP_NAME: 'authenticated',
      GOTRUE_JWT_EXP: '3600',
      // Sign-up by email and phone without confirmation, anonymous sign-ins, and a password minimum the
      // tests' short passwords meet ('Email Auth', 'signInAnonymously', GoTrueApi 'User registration').
      GOTRUE_DISABLE_SIGNUP: 'false',
      GOTRUE_EXTERNAL_EMAIL_ENABLED: 'true',
      GOTRUE_MAILER_AUTOCONFIRM: 'true',
      GOTRUE_EXTERNAL_PHONE_ENABLED: 'true',
      GOTRUE_SMS_AUTOCONFIRM: 'true',
      GOTRUE_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
      GOTRUE_PASSWORD_MIN_LENGTH: '6',
      // Email changes confirmed on both addresses; six-digit codes (the OTP tests send six digits).
      GOTRUE_MAILER_SECURE_EMAIL_CHANGE_ENABLED: 'true',
      GOTRUE_MAILER_OTP_LENGTH: '6',
      GOTRUE_MAILER_OTP_EXP: '3600',
      GOTRUE_SMS_OTP_LENGTH: '6',
      GOTRUE_SMS_OTP_EXP: '6000',
      GOTRUE_SMS_TEMPLATE: 'Your code is {{ .Code }}',
      // No SMS gateway: a fixed code for one number, as the CLI's test OTP table gives.
      GOTRUE_SMS_TEST_OTP: '1234567890:123456',
      // The suite sends mail, codes and refreshes to the same few addresses in quick succession: per-user
      // intervals of a second and limits no run reaches.
      GOTRUE_SMTP_MAX_FREQUENCY: '1s',
      GOTRUE_SMS_MAX_FREQUENCY: '1s',
      GOTRUE_MFA_PHONE_MAX_FREQUENCY: '1s',
      GOTRUE_RATE_LIMIT_EMAIL_SENT: '100',
      GOTRUE_RATE_LIMIT_SMS_SENT: '100',
      GOTRUE_RATE_LIMIT_ANONYMOUS_USERS: '100',
      GOTRUE_RATE_LIMIT_TOKEN_REFRESH: '300',
      GOTRUE_RATE_LIMIT_OTP: '100',
      GOTRUE_RATE_LIMIT_VERIFY: '100',
      GOTRUE_RATE_LIMIT_WEB3: '30',
      // Rotation with a reuse interval: the refresh lifecycle and the signOut-during-refresh tests present
      // the previous token again.
      GOTRUE_SECURITY_REFRESH_TOKEN_ROTATION_ENABLED: 'true',
      GOTRUE_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: '10',
      GOTRUE_SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION: 'false',
      // 'Identity Management': linkIdentity() and unlinkIdentity() must fail as manual linking is off.
      GOTRUE_SECURITY_MANUAL_LINKING_ENABLED: 'false',
      // 'MFA', 'WebAuthn MFA' and GoTrueApi 'MFA Admin': every factor type, up to ten per user.
      GOTRUE_MFA_TOTP_ENROLL_ENABLED: 'true',
      GOTRUE_MFA_TOTP_VERIFY_ENABLED: 'true',
      GOTRUE_MFA_PHONE_ENROLL_ENABLED: 'true',
      GOTRUE_MFA_PHONE_VERIFY_ENABLED: 'true',
      GOTRUE_MFA_PHONE_OTP_LENGTH: '6',
      GOTRUE_MFA_PHONE_TEMPLATE: 'Your code is {{ .Code }}',
      GOTRUE_MFA_WEB_AUTHN_ENROLL_ENABLED: 'true',
      GOTRUE_MFA_WEB_AUTHN_VERIFY_ENABLED: 'true',
      GOTRUE_MFA_MAX_ENROLLED_FACTORS: '10',
      // passkey.e2e: the software authenticator signs for the origin http://localhost:5173, RP id localhost.
      GOTRUE_PASSKEY_ENABLED: 'true',
      GOTRUE_WEBAUTHN_RP_ID: 'localhost',
      GOTRUE_WEBAUTHN_RP_ORIGINS: 'http://localhost:5173',
      GOTRUE_WEBAUTHN_RP_DISPLAY_NAME: 'Portcullis auth-js suite',
      // signInWithOAuth('google') must answer a URL, signInWithIdToken('google') a bad-token error: an
      // enabled provider whose credentials are never used against Google.
      GOTRUE_EXTERNAL_GOOGLE_ENABLED: 'true',
      GOTRUE_EXTERNAL_GOOGLE_CLIENT_ID: 'portcullis-auth-js-suite.apps.googleusercontent.com',
      GOTRUE_EXTERNAL_GOOGLE_SECRET: 'not-a-real-secret',
      GOTRUE_EXTERNAL_GOOGLE_SKIP_NONCE_CHECK: 'true',
      GOTRUE_EXTERNAL_GOOGLE_REDIRECT_URI: `${external}/callback`,
      // 'Web3 Authentication' expects Solana sign-in to be refused.
      GOTRUE_EXTERNAL_WEB3_SOLANA_ENABLED: 'false',
      // GoTrueApi 'OAuth Admin': the OAuth 2.1 server with client registration.
      GOTRUE_OAUTH_SERVER_ENABLED: 'true',
      GOTRUE_OAUTH_SERVER_AUTHORIZATION_PATH: '/oauth/consent',
      GOTRUE_OAUTH_SERVER_ALLOW_DYNAMIC_REGISTRATION: 'true',
    },
  };

  // The docker set shares one database, as the compose file's instances do, and is reached directly.
  const docker = (port, own) => ({
    name: `docker-${port}`,
    port,
    settings: {
      ...database(databases.docker),
      ...mail,
      ...threads(1),
      PORT: String(port),
      GOTRUE_API_HOST: '127.0.0.1',
      API_EXTERNAL_URL: `http://localhost:${port}`,
      GOTRUE_SITE_URL: `http://localhost:${port}`,
      GOTRUE_JWT_EXP: '3600',
      GOTRUE_JWT_SECRET: dockerSecret,
      ...own,
    },
  });
  // An HS256 key beside the RSA one, as in the compose file: the asymmetric instance verifies with it but
  // signs RS256; the autoconfirm instance signs HS256 and only verifies RS256.
  const oct = { kty: 'oct', k: randomBytes(32).toString('base64url'), kid: randomUUID(), alg: 'HS256' };
  const ops = (key, keyOps) => ({ ...key, key_ops: keyOps });
  return [
    cli,
    // phone-otp: a phone sign-up stays unconfirmed (no session), a code to an unknown number is resent
    // without error, and an OTP sign-in must fail: a gateway is named but has no credentials, so sending
    // fails. anonymous-disabled: anonymous sign-ins are off (the default).
    docker(DOCKER_PORTS.autoconfirmOff, {
      GOTRUE_DISABLE_SIGNUP: 'false',
      GOTRUE_MAILER_AUTOCONFIRM: 'false',
      GOTRUE_EXTERNAL_PHONE_ENABLED: 'true',
      GOTRUE_SMS_PROVIDER: 'twilio',
      GOTRUE_SMS_AUTOCONFIRM: 'false',
    }),
    // phone-otp: phone sign-up confirmed at once, then password sign-in with the phone.
    docker(DOCKER_PORTS.autoconfirmOn, {
      GOTRUE_DISABLE_SIGNUP: 'false',
      GOTRUE_MAILER_AUTOCONFIRM: 'true',
      GOTRUE_EXTERNAL_PHONE_ENABLED: 'true',
      GOTRUE_SMS_AUTOCONFIRM: 'true',
      GOTRUE_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
      GOTRUE_JWT_KEYS: JSON.stringify([ops(oct, ['sign', 'verify']), ops(signingKey, ['verify'])]),
    }),
    // signup-disabled: sign-up refused.
    docker(DOCKER_PORTS.signupDisabled, {
      GOTRUE_DISABLE_SIGNUP: 'true',
      GOTRUE_MAILER_AUTOCONFIRM: 'false',
      GOTRUE_EXTERNAL_EMAIL_ENABLED: 'false',
      GOTRUE_EXTERNAL_PHONE_ENABLED: 'false',
    }),
    // asymmetric-jwt: sessions signed RS256, so getClaims fetches /.well-known/jwks.json to verify them.
    docker(DOCKER_PORTS.asymmetric, {
      GOTRUE_DISABLE_SIGNUP: 'false',
      GOTRUE_MAILER_AUTOCONFIRM: 'true',
      GOTRUE_EXTERNAL_PHONE_ENABLED: 'true',
      GOTRUE_SMS_AUTOCONFIRM: 'true',
      GOTRUE_JWT_SECRET: oct.k,
      GOTRUE_JWT_KEYS: JSON.stringify([ops(oct, ['verify']), ops(signingKey, ['sign', 'verify'])]),
    }),
  ];
}
