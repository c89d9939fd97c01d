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

export const LOG_LEVELS = ['panic', 'fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;
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
  // The account-change notifications (docs/one-time-codes-and-mail.md#account-change-notifications)
  passwordChangedNotification: T;
  emailChangedNotification: T;
  phoneChangedNotification: T;
  identityLinkedNotification: T;
  identityUnlinkedNotification: T;
  mfaFactorEnrolledNotification: T;
  mfaFactorUnenrolledNotification: T;
}

/** Which account-change notifications are sent (MAILER_NOTIFICATIONS_<X>_ENABLED, all off by default). */
export interface NotificationSwitches {
  passwordChanged: boolean;
  emailChanged: boolean;
  phoneChanged: boolean;
  identityLinked: boolean;
  identityUnlinked: boolean;
  mfaFactorEnrolled: boolean;
  mfaFactorUnenrolled: boolean;
}

export interface Config {
  /** true when no DATABASE_URL was given: embedded Postgres, generated secret, mail/SMS to the log. */
  development: boolean;
  /** each setting given, by name (JWT_EXP), with the variable it was read from (GOTRUE_JWT_EXP, `PORT (.env)`) */
  sources: Record<string, string>;
  /** start-up warnings found while loading (ignored variables, incomplete SMS credentials); logged once by the supervisor */
  warnings: string[];
  dataDir: string;
  /** PORTCULLIS_CONTAINER, set by the Dockerfile */
  container: boolean;
  /** PORTCULLIS_DEVELOPMENT: run the development setup even in a container */
  developmentSetup: boolean;
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
    /** CORS_ALLOWED_HEADERS: request headers a preflight allows beside the original's own list (http/cors.ts) */
    corsAllowedHeaders: string[];
    maxRequestDurationSeconds: number;
    /** the HTTP guard in front of uWS (src/server/guard/); false: uWS on the public port */
    guard: boolean;
    /** client connections the guard holds at once; 0: no limit */
    maxConnections: number;
    /** SEND_TIMEOUT: a mail or SMS send that takes longer fails the request (its transaction rolls back) */
    sendTimeoutSeconds: number;
  };
  /** uvThreadpool: libuv's threadpool size (UV_THREADPOOL_SIZE), where argon2 actually runs */
  /** gomaxprocs: GOMAXPROCS as given, already applied to http and crypto where those were not given */
  workers: { http: number; crypto: number; uvThreadpool: number; gomaxprocs: string };
  db: {
    driver: 'postgres';
    url: string;
    maxPoolSize: number;
    /** DB_MAX_IDLE_POOL_SIZE: idle connections kept in the whole process, shared out like maxPoolSize; 0 = no cap */
    maxIdlePoolSize: number;
    namespace: string;
    /** bounds in seconds (0 = none for the two server-side ones) */
    acquireTimeoutSeconds: number;
    statementTimeoutSeconds: number;
    idleInTransactionTimeoutSeconds: number;
    /** DB_CONN_PERCENTAGE: when 1–100, the process's connections are this share of the server's max_connections, in place of maxPoolSize */
    connPercentage: number;
    /** DB_CONN_MAX_IDLE_TIME: a pooled connection idle this long is closed; 0 = pg's 10 s */
    connMaxIdleTimeSeconds: number;
    /** DB_CONN_MAX_LIFETIME: a pooled connection this old is replaced; 0 = never */
    connMaxLifetimeSeconds: number;
    /** callers that may queue for a connection, per connection of the pool; more are refused with 503 */
    poolWaitersPerConnection: number;
    /** the background cleanup (src/server/cleanup/); durations in seconds, 0 retention = keep audit rows forever */
    cleanup: { enabled: boolean; intervalSeconds: number; batchSize: number; graceSeconds: number; auditLogRetentionSeconds: number };
    /** false: no named prepared statements (PgBouncer in transaction mode before max_prepared_statements) */
    preparedStatements: boolean;
    /** DB_ADVISOR_*: each HTTP thread watches its pool's queue and advises a larger pool in a log line */
    advisor: { enabled: boolean; samplingIntervalSeconds: number; observationIntervalSeconds: number };
    /** where migrations run; empty: url */
    migrationsUrl: string;
    /** the PG* variables given (PGHOST, PGSSLMODE, …), by name: already in url and migrationsUrl where those leave them out */
    pgVariables: Readonly<Record<string, string>>;
  };
  log: {
    level: LogLevel;
    file: string;
    /** LOG_SQL: each statement the service runs as an `info` line, and with 'all' its values (docs/observability.md#sql-statements) */
    sql: 'none' | 'statement' | 'all';
  };
  tracing: {
    enabled: boolean;
    exporter: string;
    /** the collector's base URL, empty for the protocol's default (observability/otlp-exporters.ts) */
    otlpEndpoint: string;
    /** the full traces URL, overriding the base */
    otlpTracesEndpoint: string;
    otlpProtocol: OtlpProtocol;
    serviceName: string;
    /** OTEL_TRACES_SAMPLER and its argument; empty: the SDK's default, parent-based always-on (observability/tracing.ts) */
    sampler: string;
    samplerArg: string;
    /** OTEL_BSP_*: the batch span processor's; 0 for the SDK's default */
    batch: { scheduleDelayMs: number; maxQueueSize: number; maxExportBatchSize: number };
    /** OTEL_ATTRIBUTE_*_LIMIT and OTEL_SPAN_*_LIMIT; -1 where not set (observability/tracing.ts) */
    limits: Record<
      'attributeCount' | 'attributeValueLength' | 'spanAttributeCount' | 'spanAttributeValueLength' | 'spanEventCount' | 'spanLinkCount',
      number
    >;
  };
  metrics: {
    enabled: boolean;
    /** 'none': a value the original knows no exporter for, so nothing is exported (original-corrections.ts) */
    exporter: 'opentelemetry' | 'prometheus' | 'none';
    prometheusHost: string;
    prometheusPort: number;
    /** the full metrics URL, overriding OTEL_EXPORTER_OTLP_ENDPOINT */
    otlpMetricsEndpoint: string;
    otlpProtocol: OtlpProtocol;
    /** OTEL_METRIC_EXPORT_INTERVAL: milliseconds between two pushes */
    exportIntervalMs: number;
    /** OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE as given; read in any case, another value warned about (observability/otlp-temporality.ts) */
    temporalityPreference: string;
  };
  otelResourceAttributes: string;
  /**
   * The OTLP exporters' own variables, for both signals (`all`, OTEL_EXPORTER_OTLP_X) and for each
   * (OTEL_EXPORTER_OTLP_TRACES_X, _METRICS_X), combined as the SDK combines them (observability/otlp-exporters.ts)
   */
  otlp: Record<'all' | 'traces' | 'metrics', OtlpExporterSettings>;
  /** how a --config-dir is watched for changes (src/server/reload/) */
  reloading: {
    notifyEnabled: boolean;
    /** fall back to polling when the directory cannot be watched */
    pollerEnabled: boolean;
    pollerIntervalSeconds: number;
    signalEnabled: boolean;
    signalNumber: number;
    /** quiet time after the last change before the directory is read */
    gracePeriodSeconds: number;
  };
  debug: boolean;
  jwt: {
    secret: string;
    exp: number;
    aud: string;
    issuer: string;
    keyId: string;
    /** JWT_KEYS: private JWKs, checked at load (src/server/auth/keys.ts); empty: HS256 with the secret only */
    keys: JsonWebKey[];
    /** How an AWS KMS signing key in JWT_KEYS is reached (src/server/auth/kms-signer.ts) */
    kms: {
      /** AWS_ENDPOINT_URL_KMS (or AWS_ENDPOINT_URL); empty: the SDK's endpoint for the key's region */
      endpoint: string;
      /** AWS_ACCESS_KEY_ID; empty: the SDK's default credential chain */
      accessKeyId: string;
      secretAccessKey: string;
      sessionToken: string;
      /** AWS_PROFILE: the profile of the shared credentials and config files; empty: the SDK's default */
      profile: string;
      /** JWT_KMS_TIMEOUT: the most one signature may take, retries included */
      timeoutSeconds: number;
    };
    /** JWT_VALID_METHODS: the algorithms verification accepts; empty: those of the configured keys */
    validMethods: string[];
    adminGroupName: string;
    defaultGroupName: string;
    adminRoles: string[];
  };
  /** HTTPS_PROXY, HTTP_PROXY, NO_PROXY: the egress proxy of outbound HTTP calls (outbound-proxy/rules.ts) */
  outbound: { httpsProxy: string; httpProxy: string; noProxy: string };
  external: {
    emailEnabled: boolean;
    phoneEnabled: boolean;
    anonymousUsersEnabled: boolean;
    magicLinkEnabled: boolean;
    /** EXTERNAL_EMAIL_AUTHORIZED_ADDRESSES: when not empty, the only addresses mail goes to (delivery/authorized-addresses.ts) */
    emailAuthorizedAddresses: string[];
    /** EXTERNAL_ALLOWED_ID_TOKEN_ISSUERS: issuers the id_token grant takes with any client_id (the original's deprecated form) */
    allowedIdTokenIssuers: string[];
    /** EXTERNAL_IOS_BUNDLE_ID: accepted as the `aud` of apple id_tokens at the id_token grant, besides the client ids */
    iosBundleId: string;
    flowStateExpirySeconds: number;
    /** outbound calls to providers (token, user API, discovery, JWKS) give up after this many seconds */
    httpTimeoutSeconds: number;
    /** EXTERNAL_OIDC_PROVIDER_CACHE_TTL: how long a provider's OIDC discovery document is used before it is fetched again */
    oidcProviderCacheTtlSeconds: number;
    /** EXTERNAL_REDIRECT_URL: when set, every OAuth callback redirects here instead of the flow's redirect_to */
    redirectUrl: string;
    providers: Record<OAuthProviderName, OAuthProviderConfig>;
    /** grant_type=web3 per chain (docs/web3.md#settings) */
    web3Solana: Web3ChainConfig;
    web3Ethereum: Web3ChainConfig;
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
    /** MFA_RATE_LIMIT_CHALLENGE_AND_VERIFY: challenge and verify requests per minute per client */
    mfaChallengeAndVerify: number;
    /** POST /passkeys/authentication/options, per 5 minutes */
    passkey: number;
    /** POST /token?grant_type=web3, per 5 minutes */
    web3: number;
    /** POST /sso (RATE_LIMIT_SSO) and POST /sso/saml/acs (SAML_RATE_LIMIT_ASSERTION), per 5 minutes */
    sso: number;
    samlAssertion: number;
    /** POST /oauth/clients/register (dynamic client registration), per 5 minutes */
    oauthClientRegister: number;
  };
  password: {
    minLength: number;
    /** character sets, each needing at least one character present */
    requiredCharacters: string[];
    /** maxQueue: hashes allowed to wait for a crypto thread; beyond it 503 (0 = measured, crypto/admission.ts) */
    hash: { memoryKiB: number; timeCost: number; parallelism: number; maxQueue: number };
    /** leaked-password checks (docs/passwords.md#leaked-passwords); url is the range API's base, without /range */
    hibp: {
      enabled: boolean;
      failClosed: boolean;
      userAgent: string;
      url: string;
      bloom: { enabled: boolean; items: number; falsePositives: number };
    };
  };
  /**
   * session limits, checked by the refresh grant and every bearer check; 0 = no limit. allowLowAalSeconds: how long
   * an aal1 session of a user with a verified MFA factor lives (it also caps its access tokens' exp)
   */
  sessions: {
    timeboxSeconds: number;
    inactivityTimeoutSeconds: number;
    singlePerUser: boolean;
    tags: string[];
    allowLowAalSeconds: number;
  };
  security: {
    refreshTokenRotationEnabled: boolean;
    refreshTokenReuseIntervalSeconds: number;
    /** 2: new sessions get v2 refresh tokens (docs/tokens-and-sessions.md#v2-refresh-tokens); 0 or 1: the 12-character format */
    refreshTokenAlgorithmVersion: 0 | 1 | 2;
    /** with version 2: the share of sessions (0..100) whose 12-character token turns into a v2 token at its next refresh */
    refreshTokenUpgradePercentage: number;
    /** v2 tokens only: an older token of a session is answered with the current one instead of ending the session */
    refreshTokenAllowReuse: boolean;
    updatePasswordRequireReauthentication: boolean;
    /** SECURITY_UPDATE_PASSWORD_REQUIRE_CURRENT_PASSWORD: a password change outside a recovery session names the current one */
    updatePasswordRequireCurrentPassword: boolean;
    /** SECURITY_SB_FORWARDED_FOR_ENABLED: Sb-Forwarded-For's address keys the per-client limits (limits/per-client.ts) */
    sbForwardedForEnabled: boolean;
    /** GET /user/identities/authorize and DELETE /user/identities/{id} (docs/oauth.md#manual-linking) */
    manualLinkingEnabled: boolean;
    /** how many wrong codes a one-time token survives before it is invalidated */
    otpMaxAttempts: number;
    captcha: { enabled: boolean; provider: 'hcaptcha' | 'turnstile'; secret: string; timeoutSeconds: number; verifyUrl: string };
    /** keys for secrets at rest (docs/mfa.md#secrets-at-rest): base64url 256-bit keys by id */
    dbEncryption: { encrypt: boolean; encryptionKeyId: string; encryptionKey: string; decryptionKeys: Record<string, string> };
  };
  /**
   * the original's EXPERIMENTAL_ settings (docs/oauth.md#linking-domains). providerLinkingDomains maps a
   * provider name to its linking domain, with every provider of the deprecated providersWithOwnLinkingDomain
   * list already added in a domain of its own name unless the map names it
   */
  /** the WebAuthn relying party (docs/passkeys.md#settings); origins are full origins, e.g. https://app.example.com */
  webauthn: { rpId: string; rpDisplayName: string; rpOrigins: string[]; challengeExpirySeconds: number };
  passkey: { enabled: boolean; maxPerUser: number };
  /** providers added at run time through /admin/custom-providers (docs/custom-providers.md#settings) */
  customOAuth: {
    enabled: boolean;
    /** 0 = no limit */
    maxProviders: number;
    /** the base whose /callback custom providers send the browser back to; empty = API_EXTERNAL_URL */
    externalUrl: string;
    /** ours: provider URLs may be plain http and name loopback or private addresses (tests, private networks) */
    allowPrivateUrls: boolean;
  };
  /** SAML single sign-on (docs/sso-saml.md#settings): keys are base64 DER PKCS#1 RSA keys, checked at start */
  saml: {
    enabled: boolean;
    privateKey: string;
    privateKeyNext: string;
    allowEncryptedAssertions: boolean;
    relayStateValiditySeconds: number;
    externalUrl: string;
  };
  /**
   * the OAuth 2.1 authorization server (docs/oauth-server.md): authorizationPath is the consent page on
   * SITE_URL that /oauth/authorize sends the user to; defaultScope what a request without scope asks for
   */
  oauthServer: {
    enabled: boolean;
    allowDynamicRegistration: boolean;
    authorizationPath: string;
    authorizationTtlSeconds: number;
    defaultScope: string;
  };
  /** the SCIM 2.0 discovery documents under /scim/v2 (docs/scim.md) */
  scim: { enabled: boolean };
  smtp: {
    host: string;
    port: number;
    user: string;
    pass: string;
    adminEmail: string;
    senderName: string;
    /** SMTP_HEADERS: a JSON object of header name → values added to every mail ('' for none) */
    headers: string;
    /** SMTP_LOGGING_ENABLED: one `mail.send` info line per mail sent, naming its type, sender and recipient */
    loggingEnabled: boolean;
    maxFrequencySeconds: number;
  };
  mailer: {
    autoconfirm: boolean;
    /** an OAuth sign-in whose provider did not verify the address still gets a session (the confirmation mail is sent) */
    allowUnverifiedEmailSignIns: boolean;
    secureEmailChangeEnabled: boolean;
    otpExpSeconds: number;
    otpLength: number;
    /** MAILER_TEMPLATE_MAX_SIZE, _MAX_AGE, _RETRY_INTERVAL: fetched templates' limits (delivery/mail/template-cache.ts) */
    templateCache: { maxBytes: number; maxAgeSeconds: number; retryIntervalSeconds: number };
    /** MAILER_EXTERNAL_HOSTS: X-Forwarded-Host values that become the base of this request's mail links */
    externalHosts: string[];
    /** MAILER_EMAIL_VALIDATION_*: checks of a recipient's address before each mail (delivery/mail/address-check.ts) */
    emailValidation: {
      /** static rules, then the domain's MX (or address) records */
      extended: boolean;
      /** '' = no outside service */
      serviceUrl: string;
      /** JSON object of header name → list of values, sent to the service ('' = none) */
      serviceHeaders: string;
      /** JSON array of MX host names (or addresses) whose domains are refused ('' = none) */
      blockedMx: string;
      /** ours: the name servers asked, host or host:port (empty = the system's) */
      nameservers: string[];
    };
    urlPaths: { invite: string; confirmation: string; recovery: string; emailChange: string };
    subjects: MailTemplateSet<string>;
    /** template URLs ('' = built-in default) */
    templates: MailTemplateSet<string>;
    notifications: NotificationSwitches;
  };
  sms: {
    /** a gateway's name, '' for none, or (as the original starts with it) a name no gateway has: every send then fails */
    provider: SmsGatewayName | '' | (string & {});
    autoconfirm: boolean;
    maxFrequencySeconds: number;
    otpExpSeconds: number;
    otpLength: number;
    template: string;
    /** phone (digits, no +) → fixed OTP that bypasses the gateway */
    testOtp: Record<string, string>;
    /** ISO time after which testOtp is no longer used ('' = forever; docs/settings.md#sms) */
    testOtpValidUntil: string;
    /** the gateway's credential settings left empty: the service starts, and sending fails (docs/sms.md#gateways) */
    missingCredentials: string[];
    twilio: { accountSid: string; authToken: string; messageServiceSid: string; contentSid: string; apiBaseUrl: string };
    twilioVerify: { accountSid: string; authToken: string; messageServiceSid: string; apiBaseUrl: string };
    messagebird: { accessKey: string; originator: string; apiBaseUrl: string };
    textlocal: { apiKey: string; sender: string; apiBaseUrl: string };
    vonage: { apiKey: string; apiSecret: string; from: string; apiBaseUrl: string };
  };
  mfa: MfaConfig;
  /** AUDIT_LOG_DISABLE_POSTGRES: audit entries only as log lines, no audit_log_entries rows (docs/users-and-audit.md#audit-log) */
  auditLog: { disablePostgres: boolean };
  /** the original's EXPERIMENTAL_* switches that Portcullis builds */
  experimental: {
    /** a first password gives a user with a confirmed email and no email identity that identity (docs/users-and-audit.md#email-identity-on-first-password) */
    createEmailIdentityOnPasswordSet: boolean;
    /** provider → account-linking domain (oauth/linking-domains.ts), the deprecated list folded in */
    providerLinkingDomains: Record<string, string>;
    providersWithOwnLinkingDomain: string[];
    /** keyset pages for GET /admin/users without page/per_page (docs/api.md#get-adminusers) */
    cursorPaginationEnabled: boolean;
  };
  /** HOOK_<NAME>_*: the auth hooks (docs/hooks.md) */
  hooks: Record<HookName, HookSettings>;
}

/** The hooks by their config key; HOOK_<NAME> in the environment is the key in upper snake case. */
export const HOOK_NAMES = [
  'customAccessToken',
  'beforeUserCreated',
  'sendEmail',
  'sendSms',
  'passwordVerificationAttempt',
  'mfaVerificationAttempt',
  'afterUserCreated',
] as const;
export type HookName = (typeof HOOK_NAMES)[number];

export interface HookSettings {
  enabled: boolean;
  /** https://…, http://localhost…, or pg-functions://postgres/<schema>/<function> */
  uri: string;
  /** Standard Webhooks signing secrets `v1,whsec_<base64>` (HOOK_<NAME>_SECRETS, separated by |) */
  secrets: string[];
}

/** A factor type's switches (docs/mfa.md#settings). */
export interface FactorTypeSwitches {
  enrollEnabled: boolean;
  verifyEnabled: boolean;
}

export interface MfaConfig {
  totp: FactorTypeSwitches;
  phone: FactorTypeSwitches & { otpLength: number; template: string; maxFrequencySeconds: number };
  webauthn: FactorTypeSwitches;
  maxEnrolledFactors: number;
  maxVerifiedFactors: number;
  challengeExpirySeconds: number;
  /** unverified factors without challenges older than this are deleted at the next enrolment */
  factorExpirySeconds: number;
}

/** One Web3 chain's sign-in: whether it is on, and how long a signed message stays usable after its Issued At. */
export interface Web3ChainConfig {
  enabled: boolean;
  maximumValiditySeconds: number;
}

export interface OtlpExporterSettings {
  /** `key=value,…` with percent-encoded values, as the standard writes them; parsed by the exporter module */
  headers: string;
  /** milliseconds one export may take; 0: not set */
  timeoutMs: number;
  /** empty: not set */
  compression: '' | 'none' | 'gzip';
  /** paths of PEM files: the CA to trust the collector by, this service's certificate and key; empty: not set */
  certificate: string;
  clientCertificate: string;
  clientKey: string;
  /** set: `true` sends without TLS, another value with it, whatever the URL's scheme; empty: the scheme decides */
  insecure: string;
}

/** OTEL_EXPORTER_OTLP_PROTOCOL's values: the original's two, and the standard's JSON over HTTP */
export type OtlpProtocol = 'http/protobuf' | 'http/json' | 'grpc';
