// The typed, frozen configuration every part of the service receives. Built once by config.ts.
// Durations are whole seconds; lists are arrays; absent optional strings are ''.
import type { JsonWebKey } from 'node:crypto';

export const OAUTH_PROVIDERS = [
  'apple',
  'azure',
  'bitbucket',
  'discord',
  'facebook',
  'figma',
  'fly',
  'github',
  'gitlab',
  'google',
  'kakao',
  'keycloak',
  'linkedin',
  'linkedin_oidc',
  'notion',
  'slack',
  'slack_oidc',
  'snapchat',
  'spotify',
  'twitch',
  'twitter',
  'vercel_marketplace',
  'workos',
  'x',
  'zoom',
] as const;
export type OAuthProviderName = (typeof OAUTH_PROVIDERS)[number];

export const SMS_GATEWAYS = ['twilio', 'twilio_verify', 'messagebird', 'textlocal', 'vonage'] as const;
export type SmsGatewayName = (typeof SMS_GATEWAYS)[number];

export const LOG_LEVELS = ['panic', 'fatal', 'error', 'warn', 'info', 'debug'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** A send limit: `N` per hour (fixed window) or `N/duration` (token bucket: burst N, one per period). */
export interface SendLimit {
  max: number;
  periodSeconds: number;
  bucket: boolean;
}

export interface OAuthProviderConfig {
  enabled: boolean;
  /** EXTERNAL_X_CLIENT_ID as given: a comma list; the first id runs the flow, every id is an accepted id_token audience */
  clientId: string;
  secret: string;
  redirectUri: string;
  /** replaces the provider's default https://<host> base (gitlab host, keycloak realm, azure tenant, or a test server) */
  url: string;
  /** replaces the base of the provider's user API where it lives on another host (github api, kakao kapi...) */
  apiUrl: string;
  /** sign in even when the provider reports no email */
  emailOptional: boolean;
  /** id_token grant: do not require the nonce claim to match */
  skipNonceCheck: boolean;
}

export interface MailTemplateSet<T> {
  invite: T;
  confirmation: T;
  recovery: T;
  magicLink: T;
  emailChange: T;
  reauthentication: T;
}

export interface Config {
  /** true when no DATABASE_URL was given: embedded Postgres, generated secret, mail/SMS to the log. */
  development: boolean;
  dataDir: string;
  siteUrl: string;
  uriAllowList: string[];
  disableSignup: boolean;
  operatorToken: string;
  api: {
    host: string;
    port: number;
    endpoint: string;
    externalUrl: string;
    requestIdHeader: string;
    maxRequestDurationSeconds: number;
    /** SEND_TIMEOUT: a mail or SMS send that takes longer fails the request (its transaction rolls back) */
    sendTimeoutSeconds: number;
  };
  /** uvThreadpool: libuv's threadpool size (UV_THREADPOOL_SIZE), where argon2 actually runs */
  workers: { http: number; crypto: number; uvThreadpool: number };
  db: {
    driver: 'postgres';
    url: string;
    maxPoolSize: number;
    namespace: string;
    /** bounds in seconds (0 = none for the two server-side ones) */
    acquireTimeoutSeconds: number;
    statementTimeoutSeconds: number;
    idleInTransactionTimeoutSeconds: number;
    /** callers that may queue for a connection, per connection of the pool; more are refused with 503 */
    poolWaitersPerConnection: number;
  };
  log: { level: LogLevel; file: string };
  tracing: {
    enabled: boolean;
    exporter: string;
    /** OTLP/HTTP base endpoint; traces go to <endpoint>/v1/traces unless a traces endpoint is set */
    otlpEndpoint: string;
    otlpTracesEndpoint: string;
    serviceName: string;
  };
  metrics: { enabled: boolean; exporter: 'opentelemetry' | 'prometheus'; prometheusHost: string; prometheusPort: number };
  otelResourceAttributes: string;
  debug: boolean;
  jwt: {
    secret: string;
    exp: number;
    aud: string;
    issuer: string;
    keyId: string;
    /** JWT_KEYS: private JWKs, checked at load (src/server/auth/keys.ts); empty: HS256 with the secret only */
    keys: JsonWebKey[];
    /** JWT_VALID_METHODS: the algorithms verification accepts; empty: those of the configured keys */
    validMethods: string[];
    adminGroupName: string;
    defaultGroupName: string;
    adminRoles: string[];
  };
  external: {
    emailEnabled: boolean;
    phoneEnabled: boolean;
    anonymousUsersEnabled: boolean;
    magicLinkEnabled: boolean;
    flowStateExpirySeconds: number;
    /** outbound calls to providers (token, user API, discovery, JWKS) give up after this many seconds */
    httpTimeoutSeconds: number;
    providers: Record<OAuthProviderName, OAuthProviderConfig>;
  };
  rateLimit: {
    header: string;
    emailSent: SendLimit;
    smsSent: SendLimit;
    /** per-client token buckets: requests per 5 minutes (anonymous: per hour) */
    tokenRefresh: number;
    verify: number;
    otp: number;
    anonymousUsers: number;
  };
  password: {
    minLength: number;
    /** character sets, each needing at least one character present */
    requiredCharacters: string[];
    /** maxQueue: hashes allowed to wait for a crypto thread; beyond it 503 (0 = measured, crypto/admission.ts) */
    hash: { memoryKiB: number; timeCost: number; parallelism: number; maxQueue: number };
  };
  security: {
    refreshTokenRotationEnabled: boolean;
    refreshTokenReuseIntervalSeconds: number;
    updatePasswordRequireReauthentication: boolean;
    /** GET /user/identities/authorize and DELETE /user/identities/{id} (docs/oauth.md#manual-linking) */
    manualLinkingEnabled: boolean;
    /** how many wrong codes a one-time token survives before it is invalidated */
    otpMaxAttempts: number;
    captcha: { enabled: boolean; provider: 'hcaptcha' | 'turnstile'; secret: string; timeoutSeconds: number; verifyUrl: string };
  };
  smtp: {
    host: string;
    port: number;
    user: string;
    pass: string;
    adminEmail: string;
    senderName: string;
    maxFrequencySeconds: number;
  };
  mailer: {
    autoconfirm: boolean;
    secureEmailChangeEnabled: boolean;
    otpExpSeconds: number;
    otpLength: number;
    urlPaths: { invite: string; confirmation: string; recovery: string; emailChange: string };
    subjects: MailTemplateSet<string>;
    /** template URLs ('' = built-in default) */
    templates: MailTemplateSet<string>;
  };
  sms: {
    provider: SmsGatewayName | '';
    autoconfirm: boolean;
    maxFrequencySeconds: number;
    otpExpSeconds: number;
    otpLength: number;
    template: string;
    /** phone (digits, no +) → fixed OTP that bypasses the gateway */
    testOtp: Record<string, string>;
    twilio: { accountSid: string; authToken: string; messageServiceSid: string; contentSid: string; apiBaseUrl: string };
    twilioVerify: { accountSid: string; authToken: string; messageServiceSid: string; apiBaseUrl: string };
    messagebird: { accessKey: string; originator: string; apiBaseUrl: string };
    textlocal: { apiKey: string; sender: string; apiBaseUrl: string };
    vonage: { apiKey: string; apiSecret: string; from: string; apiBaseUrl: string };
  };
}
