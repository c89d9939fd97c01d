// The table of every setting: its environment name (without AUTH_), where it lands in Config, how its
// text is read, its default, and the JSON-schema constraints ajv checks after conversion.
import { OAUTH_PROVIDERS, HOOK_NAMES } from './types.js';
import { PG_VARIABLES } from '../../db/pg-variables.js';
import { ARGON2_MAX_MEMORY_KIB } from '../../workers/password-formats.js';

export type Kind =
  'string' | 'bool' | 'int' | 'number' | 'duration' | 'list' | 'pipeList' | 'sendLimit' | 'map' | 'pairs' | 'jwkSet' | 'logLevel';

export interface Setting {
  name: string; // e.g. JWT_EXP (read as AUTH_JWT_EXP, then GOTRUE_JWT_EXP)
  path: string; // e.g. jwt.exp
  kind: Kind;
  default: unknown;
  /**
   * extra names read as they are: without a prefix (PORT, DATABASE_URL, ...), and the original's own spelling
   * where its loader derives another name from its field than the documented one (GOTRUE_EXTERNAL_REDIRECTURL).
   * Read in this order after AUTH_X and before GOTRUE_X; where the original reads a bare name only as its
   * fallback (PORT, DATABASE_URL, RP_ID), GOTRUE_X is listed before it, so it wins there as it does in the original.
   */
  unprefixed?: string[];
  schema?: Record<string, unknown>;
  /**
   * a feature's setting: its schema is checked only while this holds (the feature is on), as the original
   * reads it only then, so a value left over from another setup does not stop the start
   */
  checkedWhen?: (flat: Record<string, unknown>) => boolean;
}

const s = (name: string, path: string, kind: Kind, dflt: unknown, schema?: Record<string, unknown>, unprefixed?: string[]): Setting => ({
  name,
  path,
  kind,
  default: dflt,
  schema,
  unprefixed,
});

const httpUrl = { pattern: '^https?://[^\\s/]+' };
/** The setting, its schema checked only while `when` holds (Setting.checkedWhen). */
const onlyWhen = (when: (flat: Record<string, unknown>) => boolean, setting: Setting): Setting => ({ ...setting, checkedWhen: when });
const tracing = (flat: Record<string, unknown>) => Boolean(flat.TRACING_ENABLED);
const otlpMetrics = (flat: Record<string, unknown>) => Boolean(flat.METRICS_ENABLED) && flat.METRICS_EXPORTER === 'opentelemetry';
const webauthn = (flat: Record<string, unknown>) =>
  Boolean(flat.PASSKEY_ENABLED || flat.MFA_WEB_AUTHN_ENROLL_ENABLED || flat.MFA_WEB_AUTHN_VERIFY_ENABLED);
const dbAdvisor = (flat: Record<string, unknown>) => Boolean(flat.DB_ADVISOR_ENABLED);
const port = { minimum: 0, maximum: 65535 };
const positive = { minimum: 1 };

const mailTypes = [
  ['INVITE', 'invite'],
  ['CONFIRMATION', 'confirmation'],
  ['RECOVERY', 'recovery'],
  ['MAGIC_LINK', 'magicLink'],
  ['EMAIL_CHANGE', 'emailChange'],
  ['REAUTHENTICATION', 'reauthentication'],
  ['PASSWORD_CHANGED_NOTIFICATION', 'passwordChangedNotification'],
  ['EMAIL_CHANGED_NOTIFICATION', 'emailChangedNotification'],
  ['PHONE_CHANGED_NOTIFICATION', 'phoneChangedNotification'],
  ['IDENTITY_LINKED_NOTIFICATION', 'identityLinkedNotification'],
  ['IDENTITY_UNLINKED_NOTIFICATION', 'identityUnlinkedNotification'],
  ['MFA_FACTOR_ENROLLED_NOTIFICATION', 'mfaFactorEnrolledNotification'],
  ['MFA_FACTOR_UNENROLLED_NOTIFICATION', 'mfaFactorUnenrolledNotification'],
] as const;
/** The mails whose link path is a setting (MAILER_URLPATHS_<X>); a magic link takes the recovery path. */
const LINKED_MAILS = [
  ['INVITE', 'invite'],
  ['CONFIRMATION', 'confirmation'],
  ['RECOVERY', 'recovery'],
  ['EMAIL_CHANGE', 'emailChange'],
] as const;
// The original's names (MAILER_NOTIFICATIONS_<X>_ENABLED) for the switches of the notifications.
const notificationTypes = [
  ['PASSWORD_CHANGED', 'passwordChanged'],
  ['EMAIL_CHANGED', 'emailChanged'],
  ['PHONE_CHANGED', 'phoneChanged'],
  ['IDENTITY_LINKED', 'identityLinked'],
  ['IDENTITY_UNLINKED', 'identityUnlinked'],
  ['MFA_FACTOR_ENROLLED', 'mfaFactorEnrolled'],
  ['MFA_FACTOR_UNENROLLED', 'mfaFactorUnenrolled'],
] as const;
const defaultSubjects: Record<string, string> = {
  invite: 'You have been invited',
  confirmation: 'Confirm Your Signup',
  recovery: 'Reset Your Password',
  magicLink: 'Your Magic Link',
  emailChange: 'Confirm Email Change',
  reauthentication: 'Confirm reauthentication',
  // The notifications are newer than the subjects above: these are the original's, which operators' users know.
  passwordChangedNotification: 'Your password was changed',
  emailChangedNotification: 'Your email address was changed',
  phoneChangedNotification: 'Your phone number was changed',
  identityLinkedNotification: 'A new sign-in method was linked to your account',
  identityUnlinkedNotification: 'A sign-in method was removed from your account',
  mfaFactorEnrolledNotification: 'A new verification method was added to your account',
  mfaFactorUnenrolledNotification: 'A verification method was removed from your account',
};

export const SETTINGS: Setting[] = [
  s('DATA_DIR', 'dataDir', 'string', './.data'),
  // Set by the Dockerfile: in a container, no DATABASE_URL is a mistake unless DEVELOPMENT_SETUP asks for it.
  s('CONTAINER', 'container', 'bool', false, undefined, ['PORTCULLIS_CONTAINER']),
  s('DEVELOPMENT_SETUP', 'developmentSetup', 'bool', false, undefined, ['PORTCULLIS_DEVELOPMENT']),
  // Any absolute URL, as the original: a mobile app's site may be its deep link (myapp://callback); cross-field.ts.
  s('SITE_URL', 'siteUrl', 'string', ''),
  s('URI_ALLOW_LIST', 'uriAllowList', 'list', []),
  s('DISABLE_SIGNUP', 'disableSignup', 'bool', false),
  s('OPERATOR_TOKEN', 'operatorToken', 'string', ''),

  s('API_HOST', 'api.host', 'string', '0.0.0.0'),
  s('API_PORT', 'api.port', 'int', 8081, port, ['GOTRUE_API_PORT', 'PORT']),
  s('API_ENDPOINT', 'api.endpoint', 'string', ''),
  s('API_EXTERNAL_URL', 'api.externalUrl', 'string', '', httpUrl, ['GOTRUE_API_API_EXTERNAL_URL', 'API_EXTERNAL_URL']),
  s('REQUEST_ID_HEADER', 'api.requestIdHeader', 'string', '', undefined, ['GOTRUE_API_REQUEST_ID_HEADER', 'REQUEST_ID_HEADER']),
  s('CORS_ALLOWED_HEADERS', 'api.corsAllowedHeaders', 'list', []),
  // 0 or less: no deadline in the original, a day here (original-corrections.ts).
  s('API_MAX_REQUEST_DURATION', 'api.maxRequestDurationSeconds', 'duration', 10),
  // false: uWS listens on the public port itself, with its parser's limits (docs/http-guard.md).
  s('HTTP_GUARD', 'api.guard', 'bool', true),
  // Client connections the guard holds at once (0: no limit); beyond, the oldest quiet one is closed.
  s('HTTP_MAX_CONNECTIONS', 'api.maxConnections', 'int', 10_000, { minimum: 0 }),

  s('HTTP_WORKERS', 'workers.http', 'int', 0, { minimum: 0, maximum: 256 }),
  s('CRYPTO_WORKERS', 'workers.crypto', 'int', 0, { minimum: 0, maximum: 256 }),
  // The original's Go runtime sizes itself by it; here the default thread counts (cpu-budget.ts).
  s('GOMAXPROCS', 'workers.gomaxprocs', 'string', '', undefined, ['GOMAXPROCS']),
  // libuv reads this itself before any of our code runs; we read it only to warn when it caps the pool.
  s('UV_THREADPOOL_SIZE', 'workers.uvThreadpool', 'int', 4, { minimum: 1, maximum: 1024 }, ['UV_THREADPOOL_SIZE']),

  s('DB_DRIVER', 'db.driver', 'string', 'postgres', { enum: ['postgres'] }),
  s('DB_DATABASE_URL', 'db.url', 'string', '', { pattern: '^((postgres|postgresql)://|\\s*[A-Za-z_]\\w*\\s*=)' }, [
    'GOTRUE_DB_DATABASE_URL',
    'DATABASE_URL',
  ]),
  s('DB_MAX_POOL_SIZE', 'db.maxPoolSize', 'int', 0, { minimum: 0 }),
  s('DB_MAX_IDLE_POOL_SIZE', 'db.maxIdlePoolSize', 'int', 0, { minimum: 0 }),
  // Every wait on the database is bounded, so a mistake or an outage costs a request seconds, not a thread.
  // The original's connection lifetimes (its Go pool's), applied to each HTTP thread's pool.
  // Outside 0–100: clamped, as the original (original-corrections.ts).
  s('DB_CONN_PERCENTAGE', 'db.connPercentage', 'int', 0),
  s('DB_CONN_MAX_IDLE_TIME', 'db.connMaxIdleTimeSeconds', 'duration', 0, { minimum: 0 }),
  s('DB_CONN_MAX_LIFETIME', 'db.connMaxLifetimeSeconds', 'duration', 0, { minimum: 0 }),
  s('DB_ACQUIRE_TIMEOUT', 'db.acquireTimeoutSeconds', 'duration', 3, { exclusiveMinimum: 0 }),
  s('DB_STATEMENT_TIMEOUT', 'db.statementTimeoutSeconds', 'duration', 5, { minimum: 0 }),
  s('DB_IDLE_IN_TRANSACTION_TIMEOUT', 'db.idleInTransactionTimeoutSeconds', 'duration', 10, { minimum: 0 }),
  s('DB_POOL_WAITERS_PER_CONNECTION', 'db.poolWaitersPerConnection', 'int', 100, { minimum: 0 }),
  // false: statements go unnamed, for a PgBouncer in transaction mode without max_prepared_statements.
  s('DB_PREPARED_STATEMENTS', 'db.preparedStatements', 'bool', true),
  // The original's pool advisor (src/db/pool-advisor.ts); its intervals crash the original's start at 0.
  s('DB_ADVISOR_ENABLED', 'db.advisor.enabled', 'bool', true),
  onlyWhen(dbAdvisor, s('DB_ADVISOR_SAMPLING_INTERVAL', 'db.advisor.samplingIntervalSeconds', 'duration', 0.2, { minimum: 0.001 })),
  onlyWhen(
    dbAdvisor,
    s('DB_ADVISOR_OBSERVATION_INTERVAL', 'db.advisor.observationIntervalSeconds', 'duration', 20, { exclusiveMinimum: 0 }),
  ),
  // Migrations need one session (an advisory lock, search_path): PostgreSQL itself, not a transaction pooler.
  s('DB_MIGRATIONS_DATABASE_URL', 'db.migrationsUrl', 'string', '', { pattern: '^((postgres|postgresql)://|\\s*[A-Za-z_]\\w*\\s*=)' }),
  // The variables libpq and the original's pgx read for what the connection strings leave out; folded
  // into both at load (database-url-check.ts), so nothing reads them after (docs/settings.md#pg-variables).
  ...Object.keys(PG_VARIABLES).map((name) => s(name, `db.pgVariables.${name}`, 'string', '', undefined, [name])),
  s('DB_NAMESPACE', 'db.namespace', 'string', 'auth', { pattern: '^[a-z_][a-z0-9_]{0,62}$' }, ['GOTRUE_DB_DB_NAMESPACE', 'DB_NAMESPACE']),
  // The background cleanup of rows that can no longer be used (docs/tokens-and-sessions.md#cleanup).
  s('DB_CLEANUP_ENABLED', 'db.cleanup.enabled', 'bool', true),
  s('DB_CLEANUP_INTERVAL', 'db.cleanup.intervalSeconds', 'duration', 60, { exclusiveMinimum: 0, maximum: 86400 }),
  s('DB_CLEANUP_BATCH_SIZE', 'db.cleanup.batchSize', 'int', 100, { minimum: 1, maximum: 10000 }),
  s('DB_CLEANUP_GRACE', 'db.cleanup.graceSeconds', 'duration', 86400, { minimum: 0 }),
  s('DB_CLEANUP_AUDIT_LOG_RETENTION', 'db.cleanup.auditLogRetentionSeconds', 'duration', 0, { minimum: 0 }),
  // The audit trail's destinations (docs/users-and-audit.md#audit-log): the log line is always written.
  s('AUDIT_LOG_DISABLE_POSTGRES', 'auditLog.disablePostgres', 'bool', false),

  // The original's names in any case too: WARNING, Debug, trace (docs/settings.md#logs-traces-and-metrics).
  // Another name starts the service, as in the original, with a warning (original-corrections.ts).
  s('LOG_LEVEL', 'log.level', 'logLevel', 'info'),
  // Opened at start: one that takes no lines stops it (config/log-file.ts).
  s('LOG_FILE', 'log.file', 'string', ''),
  // The original's pop logger: any value but these two logs nothing (original-corrections.ts).
  s('LOG_SQL', 'log.sql', 'string', 'none'),
  s('TRACING_ENABLED', 'tracing.enabled', 'bool', false),
  // The original reads no value of this (OTLP is the only tracing there is): any is accepted.
  s('TRACING_EXPORTER', 'tracing.exporter', 'string', 'opentelemetry'),
  // The standard OpenTelemetry variables (unprefixed), read here so nothing else reads the environment.
  // Empty: the protocol's default collector, http://localhost:4318 over HTTP, :4317 over gRPC (otlp-exporters.ts).
  // Checked only while traces or metrics go over OTLP: the standard variables may be set for other programs.
  onlyWhen(
    (flat) => tracing(flat) || otlpMetrics(flat),
    s('OTEL_EXPORTER_OTLP_ENDPOINT', 'tracing.otlpEndpoint', 'string', '', { pattern: '^https?://' }, ['OTEL_EXPORTER_OTLP_ENDPOINT']),
  ),
  onlyWhen(
    tracing,
    s('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'tracing.otlpTracesEndpoint', 'string', '', { pattern: '^https?://' }, [
      'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
    ]),
  ),
  s('OTEL_SERVICE_NAME', 'tracing.serviceName', 'string', 'gotrue', undefined, ['OTEL_SERVICE_NAME']),
  s('METRICS_ENABLED', 'metrics.enabled', 'bool', false),
  // Another value exports nothing, with a warning, as the original (original-corrections.ts).
  s('METRICS_EXPORTER', 'metrics.exporter', 'string', 'opentelemetry'),
  onlyWhen(
    otlpMetrics,
    s('OTEL_EXPORTER_OTLP_METRICS_ENDPOINT', 'metrics.otlpMetricsEndpoint', 'string', '', { pattern: '^https?://' }, [
      'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT',
    ]),
  ),
  s('OTEL_METRIC_EXPORT_INTERVAL', 'metrics.exportIntervalMs', 'int', 60000, { minimum: 100 }, ['OTEL_METRIC_EXPORT_INTERVAL']),
  // cumulative (empty), delta or lowmemory, in any case; another value is warned about and ignored, as the
  // original's exporters do (otlp-temporality.ts).
  s('OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE', 'metrics.temporalityPreference', 'string', '', undefined, [
    'OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE',
  ]),
  s('OTEL_EXPORTER_PROMETHEUS_HOST', 'metrics.prometheusHost', 'string', '0.0.0.0', undefined, [
    'GOTRUE_METRICS_OTEL_EXPORTER_PROMETHEUS_HOST',
    'OTEL_EXPORTER_PROMETHEUS_HOST',
  ]),
  s('OTEL_EXPORTER_PROMETHEUS_PORT', 'metrics.prometheusPort', 'int', 9100, port, [
    'GOTRUE_METRICS_OTEL_EXPORTER_PROMETHEUS_PORT',
    'OTEL_EXPORTER_PROMETHEUS_PORT',
  ]),
  // How traces and metrics reach the collector (otlp-exporters.ts): each its own, as in the original, both
  // falling back to the standard variable; another value is corrected with a warning (original-corrections.ts).
  s('TRACING_OTEL_EXPORTER_OTLP_PROTOCOL', 'tracing.otlpProtocol', 'string', 'http/protobuf', undefined, [
    'AUTH_OTEL_EXPORTER_OTLP_PROTOCOL',
    'GOTRUE_TRACING_OTEL_EXPORTER_OTLP_PROTOCOL',
    'OTEL_EXPORTER_OTLP_PROTOCOL',
  ]),
  s('METRICS_OTEL_EXPORTER_OTLP_PROTOCOL', 'metrics.otlpProtocol', 'string', 'http/protobuf', undefined, [
    'AUTH_OTEL_EXPORTER_OTLP_PROTOCOL',
    'GOTRUE_METRICS_OTEL_EXPORTER_OTLP_PROTOCOL',
    'OTEL_EXPORTER_OTLP_PROTOCOL',
  ]),
  s('OTEL_RESOURCE_ATTRIBUTES', 'otelResourceAttributes', 'string', '', undefined, ['OTEL_RESOURCE_ATTRIBUTES']),
  // The exporters' and the trace SDK's own variables (docs/observability.md#where-telemetry-goes): read here
  // with the others, so that a configuration file sets them as the environment does (the original loads its
  // files into its environment, where its SDK reads them), and handed to the SDK explicitly
  // (otlp-exporters.ts, tracing.ts). The headers stay text: the exporters parse them as the SDK would.
  ...(['', 'TRACES_', 'METRICS_'] as const).flatMap((signal) => {
    const at = signal === '' ? 'otlp.all' : signal === 'TRACES_' ? 'otlp.traces' : 'otlp.metrics';
    return [
      s(`OTEL_EXPORTER_OTLP_${signal}HEADERS`, `${at}.headers`, 'string', '', undefined, [`OTEL_EXPORTER_OTLP_${signal}HEADERS`]),
      // 0: not set (the signal's own, else the general one, else ours: a second).
      s(`OTEL_EXPORTER_OTLP_${signal}TIMEOUT`, `${at}.timeoutMs`, 'int', 0, { minimum: 0 }, [`OTEL_EXPORTER_OTLP_${signal}TIMEOUT`]),
      // Paths of PEM files (relative to the working directory, as the SDK reads them): the CA that signs the
      // collector's certificate, and this service's own certificate and key where the collector asks for one.
      s(`OTEL_EXPORTER_OTLP_${signal}CERTIFICATE`, `${at}.certificate`, 'string', '', undefined, [
        `OTEL_EXPORTER_OTLP_${signal}CERTIFICATE`,
      ]),
      s(`OTEL_EXPORTER_OTLP_${signal}CLIENT_CERTIFICATE`, `${at}.clientCertificate`, 'string', '', undefined, [
        `OTEL_EXPORTER_OTLP_${signal}CLIENT_CERTIFICATE`,
      ]),
      s(`OTEL_EXPORTER_OTLP_${signal}CLIENT_KEY`, `${at}.clientKey`, 'string', '', undefined, [`OTEL_EXPORTER_OTLP_${signal}CLIENT_KEY`]),
      // Text, not a boolean: set at all, it overrides the URL's scheme (`true`: no TLS, anything else: TLS), as
      // the original's SDK reads it; empty: the scheme decides (otlp-exporters.ts).
      s(`OTEL_EXPORTER_OTLP_${signal}INSECURE`, `${at}.insecure`, 'string', '', undefined, [`OTEL_EXPORTER_OTLP_${signal}INSECURE`]),
      onlyWhen(
        (flat) => tracing(flat) || otlpMetrics(flat),
        s(`OTEL_EXPORTER_OTLP_${signal}COMPRESSION`, `${at}.compression`, 'string', '', { enum: ['', 'none', 'gzip'] }, [
          `OTEL_EXPORTER_OTLP_${signal}COMPRESSION`,
        ]),
      ),
    ];
  }),
  // Empty: parent-based always-on, the SDK's default; a name the SDK does not know is warned about and the default used (tracing.ts).
  s('OTEL_TRACES_SAMPLER', 'tracing.sampler', 'string', '', undefined, ['OTEL_TRACES_SAMPLER']),
  s('OTEL_TRACES_SAMPLER_ARG', 'tracing.samplerArg', 'string', '', undefined, ['OTEL_TRACES_SAMPLER_ARG']),
  // The batch span processor's; 0: the SDK's default (the export timeout is the exporter's, above).
  s('OTEL_BSP_SCHEDULE_DELAY', 'tracing.batch.scheduleDelayMs', 'int', 0, { minimum: 0 }, ['OTEL_BSP_SCHEDULE_DELAY']),
  s('OTEL_BSP_MAX_QUEUE_SIZE', 'tracing.batch.maxQueueSize', 'int', 0, { minimum: 0 }, ['OTEL_BSP_MAX_QUEUE_SIZE']),
  s('OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 'tracing.batch.maxExportBatchSize', 'int', 0, { minimum: 0 }, ['OTEL_BSP_MAX_EXPORT_BATCH_SIZE']),
  // The span limits (tracing.ts): -1, not set (a span's own limit, else the general one, else the SDK's
  // default: 128 attributes, events and links, values of any length).
  ...(
    [
      ['OTEL_ATTRIBUTE_COUNT_LIMIT', 'attributeCount'],
      ['OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT', 'attributeValueLength'],
      ['OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT', 'spanAttributeCount'],
      ['OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT', 'spanAttributeValueLength'],
      ['OTEL_SPAN_EVENT_COUNT_LIMIT', 'spanEventCount'],
      ['OTEL_SPAN_LINK_COUNT_LIMIT', 'spanLinkCount'],
    ] as const
  ).map(([name, field]) => s(name, `tracing.limits.${field}`, 'int', -1, { minimum: 0 }, [name])),
  // Reloading the --config-dir (docs/settings.md#reloading); read at start only, as the original. POLLERENABLED
  // is the original's spelling: its field is not split into words.
  s('RELOADING_NOTIFY_ENABLED', 'reloading.notifyEnabled', 'bool', true),
  s('RELOADING_POLLERENABLED', 'reloading.pollerEnabled', 'bool', false),
  s('RELOADING_POLLER_INTERVAL', 'reloading.pollerIntervalSeconds', 'duration', 10, { exclusiveMinimum: 0 }),
  s('RELOADING_SIGNAL_ENABLED', 'reloading.signalEnabled', 'bool', false),
  s('RELOADING_SIGNAL_NUMBER', 'reloading.signalNumber', 'int', 10, { minimum: 1, maximum: 64 }),
  s('RELOADING_GRACE_PERIOD_INTERVAL', 'reloading.gracePeriodSeconds', 'duration', 5, { minimum: 0 }),
  // Not a setting of the original: a value that is no boolean is false, with a warning (original-corrections.ts).
  s('DEBUG', 'debug', 'string', 'false'),

  s('JWT_SECRET', 'jwt.secret', 'string', ''),
  // 0 is the default, as in the original (original-corrections.ts); so the code lifetimes and INTERNAL_HTTP_TIMEOUT.
  s('JWT_EXP', 'jwt.exp', 'int', 3600, { minimum: 0 }),
  // Empty by default, as the original: a deployment that never set it has users and tokens with aud "", and
  // must find them after the swap. The development setup and Supabase's own deployments use `authenticated`.
  s('JWT_AUD', 'jwt.aud', 'string', ''),
  s('JWT_ISSUER', 'jwt.issuer', 'string', ''),
  s('JWT_KEY_ID', 'jwt.keyId', 'string', ''),
  // Private JWKs checked and parsed here, so bad key material stops start-up (src/server/auth/keys.ts).
  s('JWT_KEYS', 'jwt.keys', 'jwkSet', []),
  // AWS KMS signing keys in JWT_KEYS (docs/tokens-and-sessions.md#aws-kms-signing-keys): the AWS SDK's own
  // variables, read here and handed to the KMS client. Without an access key the SDK's default chain finds credentials.
  s('AWS_ENDPOINT_URL_KMS', 'jwt.kms.endpoint', 'string', '', httpUrl, ['AWS_ENDPOINT_URL_KMS', 'AWS_ENDPOINT_URL']),
  s('AWS_ACCESS_KEY_ID', 'jwt.kms.accessKeyId', 'string', '', undefined, ['AWS_ACCESS_KEY_ID']),
  s('AWS_SECRET_ACCESS_KEY', 'jwt.kms.secretAccessKey', 'string', '', undefined, ['AWS_SECRET_ACCESS_KEY']),
  s('AWS_SESSION_TOKEN', 'jwt.kms.sessionToken', 'string', '', undefined, ['AWS_SESSION_TOKEN']),
  // The shared files' profile the SDK's credential chain reads, when no access key is given: here so a configuration file sets it too.
  s('AWS_PROFILE', 'jwt.kms.profile', 'string', '', undefined, ['AWS_PROFILE']),
  s('JWT_KMS_TIMEOUT', 'jwt.kms.timeoutSeconds', 'duration', 3, { exclusiveMinimum: 0, maximum: 60 }),
  // A name Portcullis has no algorithm for is kept with a warning, as the original never matches it (original-corrections.ts).
  s('JWT_VALID_METHODS', 'jwt.validMethods', 'list', []),
  s('JWT_ADMIN_GROUP_NAME', 'jwt.adminGroupName', 'string', 'admin'),
  s('JWT_DEFAULT_GROUP_NAME', 'jwt.defaultGroupName', 'string', ''),
  s('JWT_ADMIN_ROLES', 'jwt.adminRoles', 'list', ['service_role', 'supabase_admin']),

  s('EXTERNAL_EMAIL_ENABLED', 'external.emailEnabled', 'bool', true),
  s('EXTERNAL_PHONE_ENABLED', 'external.phoneEnabled', 'bool', false),
  s('EXTERNAL_ANONYMOUS_USERS_ENABLED', 'external.anonymousUsersEnabled', 'bool', false),
  s('EXTERNAL_EMAIL_MAGIC_LINK_ENABLED', 'external.magicLinkEnabled', 'bool', true),
  s('EXTERNAL_EMAIL_AUTHORIZED_ADDRESSES', 'external.emailAuthorizedAddresses', 'list', []),
  // The issuers grant_type=id_token accepts with a client_id of the caller's choosing (docs/oauth.md#the-id_token-grant).
  s('EXTERNAL_ALLOWED_ID_TOKEN_ISSUERS', 'external.allowedIdTokenIssuers', 'list', [
    'https://appleid.apple.com',
    'https://accounts.google.com',
  ]),
  // An iOS app's bundle id: one more `aud` the id_token grant accepts for apple (docs/oauth.md#the-id_token-grant).
  s('EXTERNAL_IOS_BUNDLE_ID', 'external.iosBundleId', 'string', ''),
  // Shorter than 300 s: 300 s, as the original (original-corrections.ts).
  s('EXTERNAL_FLOW_STATE_EXPIRY_DURATION', 'external.flowStateExpirySeconds', 'duration', 300),
  s('EXTERNAL_OIDC_PROVIDER_CACHE_TTL', 'external.oidcProviderCacheTtlSeconds', 'duration', 3600, { minimum: 0 }),
  // Web3 sign-in (docs/web3.md#settings): each chain on its own; a signed message is refused once its
  // Issued At is further than the validity duration from now, either way.
  s('EXTERNAL_WEB3_SOLANA_ENABLED', 'external.web3Solana.enabled', 'bool', false),
  s('EXTERNAL_WEB3_SOLANA_MAXIMUM_VALIDITY_DURATION', 'external.web3Solana.maximumValiditySeconds', 'duration', 600, positive),
  s('EXTERNAL_WEB3_ETHEREUM_ENABLED', 'external.web3Ethereum.enabled', 'bool', false),
  s('EXTERNAL_WEB3_ETHEREUM_MAXIMUM_VALIDITY_DURATION', 'external.web3Ethereum.maximumValiditySeconds', 'duration', 600, positive),
  s('INTERNAL_HTTP_TIMEOUT', 'external.httpTimeoutSeconds', 'duration', 10, { minimum: 0 }),
  // The egress proxy of every outbound HTTP call, read under the names the original's HTTP client reads
  // (upper case first), AUTH_ and GOTRUE_ too; checked in cross-field.ts (docs/settings.md#outbound-proxy).
  s('HTTPS_PROXY', 'outbound.httpsProxy', 'string', '', undefined, ['HTTPS_PROXY', 'https_proxy']),
  s('HTTP_PROXY', 'outbound.httpProxy', 'string', '', undefined, ['HTTP_PROXY', 'http_proxy']),
  s('NO_PROXY', 'outbound.noProxy', 'string', '', undefined, ['NO_PROXY', 'no_proxy']),
  // Where every OAuth callback ends, whatever redirect_to the flow carried (docs/oauth.md#the-flow).
  s('EXTERNAL_REDIRECT_URL', 'external.redirectUrl', 'string', '', undefined, ['GOTRUE_EXTERNAL_REDIRECTURL']),
  ...OAUTH_PROVIDERS.flatMap((p) => {
    const env = `EXTERNAL_${p.toUpperCase()}`;
    const at = `external.providers.${p}`;
    return [
      s(`${env}_ENABLED`, `${at}.enabled`, 'bool', false),
      s(`${env}_CLIENT_ID`, `${at}.clientId`, 'string', ''),
      s(`${env}_SECRET`, `${at}.secret`, 'string', ''),
      s(`${env}_REDIRECT_URI`, `${at}.redirectUri`, 'string', ''),
      // Both URLs http(s) once the provider is enabled (cross-field.ts).
      s(`${env}_URL`, `${at}.url`, 'string', ''),
      s(`${env}_API_URL`, `${at}.apiUrl`, 'string', ''),
      s(`${env}_EMAIL_OPTIONAL`, `${at}.emailOptional`, 'bool', false),
      s(`${env}_SKIP_NONCE_CHECK`, `${at}.skipNonceCheck`, 'bool', false),
    ];
  }),

  s('RATE_LIMIT_HEADER', 'rateLimit.header', 'string', ''),
  s('RATE_LIMIT_EMAIL_SENT', 'rateLimit.emailSent', 'sendLimit', { max: 30, periodSeconds: 3600, bucket: false }),
  s('RATE_LIMIT_SMS_SENT', 'rateLimit.smsSent', 'sendLimit', { max: 30, periodSeconds: 3600, bucket: false }),
  // Requests per period; fractions are allowed (0.5 = one per two periods), as the original reads them as floats.
  s('RATE_LIMIT_TOKEN_REFRESH', 'rateLimit.tokenRefresh', 'number', 150, { minimum: 0 }),
  s('RATE_LIMIT_VERIFY', 'rateLimit.verify', 'number', 30, { minimum: 0 }),
  s('RATE_LIMIT_OTP', 'rateLimit.otp', 'number', 30, { minimum: 0 }),
  s('RATE_LIMIT_ANONYMOUS_USERS', 'rateLimit.anonymousUsers', 'number', 30, { minimum: 0 }),
  s('RATE_LIMIT_PASSKEY', 'rateLimit.passkey', 'number', 30, { minimum: 0 }),
  s('RATE_LIMIT_WEB3', 'rateLimit.web3', 'number', 30, { minimum: 0 }),
  s('RATE_LIMIT_SSO', 'rateLimit.sso', 'number', 30, { minimum: 0 }),
  s('RATE_LIMIT_OAUTH_DYNAMIC_CLIENT_REGISTER', 'rateLimit.oauthClientRegister', 'number', 10, { minimum: 0 }, [
    'GOTRUE_RATE_LIMIT_O_AUTH_DYNAMIC_CLIENT_REGISTER',
  ]),

  // Any whole number, as the original: under 6 is 6 (config/load.ts).
  s('PASSWORD_MIN_LENGTH', 'password.minLength', 'int', 6),
  s('PASSWORD_REQUIRED_CHARACTERS', 'password.requiredCharacters', 'string', ''),
  s('PASSWORD_HASH_MEMORY_KIB', 'password.hash.memoryKiB', 'int', 19456, { minimum: 1024, maximum: ARGON2_MAX_MEMORY_KIB }),
  s('PASSWORD_HASH_TIME_COST', 'password.hash.timeCost', 'int', 2, { minimum: 1, maximum: 20 }),
  s('PASSWORD_HASH_PARALLELISM', 'password.hash.parallelism', 'int', 1, { minimum: 1, maximum: 16 }),
  // 0: what the crypto threads finish within half a second at the hash time measured (src/server/crypto/admission.ts)
  s('PASSWORD_HASH_MAX_QUEUE', 'password.hash.maxQueue', 'int', 0, { minimum: 0, maximum: 100000 }),
  // Leaked-password checks against the Pwned Passwords range API (docs/passwords.md#leaked-passwords).
  s('PASSWORD_HIBP_ENABLED', 'password.hibp.enabled', 'bool', false),
  s('PASSWORD_HIBP_FAIL_CLOSED', 'password.hibp.failClosed', 'bool', false),
  s('PASSWORD_HIBP_USER_AGENT', 'password.hibp.userAgent', 'string', 'https://github.com/supabase/gotrue', { pattern: '^[\\x20-\\x7e]+$' }),
  // ours: a mirror of the range API (or a test's fake); /range/<prefix> is appended
  s('PASSWORD_HIBP_URL', 'password.hibp.url', 'string', 'https://api.pwnedpasswords.com', httpUrl),
  s('PASSWORD_HIBP_BLOOM_ENABLED', 'password.hibp.bloom.enabled', 'bool', false),
  // Over 10 million items (54 MB per HTTP thread at 1e-9) is said at start: a typo could take gigabytes (original-corrections.ts).
  s('PASSWORD_HIBP_BLOOM_ITEMS', 'password.hibp.bloom.items', 'int', 100000, { minimum: 1 }),
  s('PASSWORD_HIBP_BLOOM_FALSE_POSITIVES', 'password.hibp.bloom.falsePositives', 'number', 0.0000099, {
    minimum: 0.000000001,
    maximum: 0.5,
  }),

  // Session limits (docs/tokens-and-sessions.md#session-limits); 0 turns a limit off.
  s('SESSIONS_TIMEBOX', 'sessions.timeboxSeconds', 'duration', 0, { minimum: 0 }),
  s('SESSIONS_INACTIVITY_TIMEOUT', 'sessions.inactivityTimeoutSeconds', 'duration', 0, { minimum: 0 }),
  s('SESSIONS_SINGLE_PER_USER', 'sessions.singlePerUser', 'bool', false),
  s('SESSIONS_TAGS', 'sessions.tags', 'list', []),
  s('SESSIONS_ALLOW_LOW_AAL', 'sessions.allowLowAalSeconds', 'duration', 0, { minimum: 0 }),

  s('SECURITY_REFRESH_TOKEN_ROTATION_ENABLED', 'security.refreshTokenRotationEnabled', 'bool', true),
  s('SECURITY_REFRESH_TOKEN_REUSE_INTERVAL', 'security.refreshTokenReuseIntervalSeconds', 'duration', 0, { minimum: 0 }),
  // v2 refresh tokens (docs/tokens-and-sessions.md#v2-refresh-tokens): 0 and 1 both issue the 12-character format.
  s('SECURITY_REFRESH_TOKEN_ALGORITHM_VERSION', 'security.refreshTokenAlgorithmVersion', 'int', 0, { enum: [0, 1, 2] }),
  s('SECURITY_REFRESH_TOKEN_UPGRADE_PERCENTAGE', 'security.refreshTokenUpgradePercentage', 'int', 0, { minimum: 0, maximum: 100 }),
  s('SECURITY_REFRESH_TOKEN_ALLOW_REUSE', 'security.refreshTokenAllowReuse', 'bool', false),
  s('SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION', 'security.updatePasswordRequireReauthentication', 'bool', false),
  s('SECURITY_UPDATE_PASSWORD_REQUIRE_CURRENT_PASSWORD', 'security.updatePasswordRequireCurrentPassword', 'bool', false),
  s('SECURITY_SB_FORWARDED_FOR_ENABLED', 'security.sbForwardedForEnabled', 'bool', false),
  s('SECURITY_MANUAL_LINKING_ENABLED', 'security.manualLinkingEnabled', 'bool', false),
  // Which providers link accounts by email with which (docs/oauth.md#linking-domains). The deprecated list is
  // folded into the map when the configuration is assembled (config/load.ts), the map's own entries winning.
  s('EXPERIMENTAL_PROVIDER_LINKING_DOMAINS', 'experimental.providerLinkingDomains', 'pairs', {}),
  s('EXPERIMENTAL_PROVIDERS_WITH_OWN_LINKING_DOMAIN', 'experimental.providersWithOwnLinkingDomain', 'list', []),
  s('SECURITY_OTP_MAX_ATTEMPTS', 'security.otpMaxAttempts', 'int', 5, { minimum: 1, maximum: 100 }),
  s('SECURITY_CAPTCHA_ENABLED', 'security.captcha.enabled', 'bool', false),
  // Checked only with captcha on (cross-field.ts), as the original; 0 s means 10 s (original-corrections.ts).
  s('SECURITY_CAPTCHA_PROVIDER', 'security.captcha.provider', 'string', 'hcaptcha'),
  s('SECURITY_CAPTCHA_SECRET', 'security.captcha.secret', 'string', ''),
  s('SECURITY_CAPTCHA_TIMEOUT', 'security.captcha.timeoutSeconds', 'duration', 10, { minimum: 0 }),
  s('SECURITY_CAPTCHA_VERIFY_URL', 'security.captcha.verifyUrl', 'string', '', { pattern: '^(https?://\\S+)?$' }),

  // The original's experimental switches: off by default, and liable to change as the original's do.
  s('EXPERIMENTAL_CREATE_EMAIL_IDENTITY_ON_PASSWORD_SET_ENABLED', 'experimental.createEmailIdentityOnPasswordSet', 'bool', false),

  // WebAuthn relying party, shared by passkeys and WebAuthn MFA factors (docs/passkeys.md#settings).
  // Any value starts, as in the original; one its WebAuthn library refuses (a port, a path...) is named in a
  // start-up warning and fails every ceremony (webauthn/rp-id.ts). 0 s or less: every passkey challenge has
  // expired when answered; a limit of 0 or less: no new passkey (both as there, the first with a warning).
  // The origins are checked only with passkeys or WebAuthn factors on.
  s('WEBAUTHN_RP_ID', 'webauthn.rpId', 'string', '', undefined, ['GOTRUE_WEBAUTHN_RP_ID', 'RP_ID']),
  s('WEBAUTHN_RP_DISPLAY_NAME', 'webauthn.rpDisplayName', 'string', ''),
  onlyWhen(webauthn, s('WEBAUTHN_RP_ORIGINS', 'webauthn.rpOrigins', 'list', [], { type: 'array', items: { pattern: '^\\S+$' } })),
  s('WEBAUTHN_CHALLENGE_EXPIRY_DURATION', 'webauthn.challengeExpirySeconds', 'duration', 300),
  s('PASSKEY_ENABLED', 'passkey.enabled', 'bool', false),
  s('PASSKEY_MAX_PASSKEYS_PER_USER', 'passkey.maxPerUser', 'int', 10),
  // Custom OAuth/OIDC providers (docs/custom-providers.md#settings); the last is Portcullis' own.
  s('CUSTOM_OAUTH_ENABLED', 'customOAuth.enabled', 'bool', true),
  s('CUSTOM_OAUTH_MAX_PROVIDERS', 'customOAuth.maxProviders', 'int', 0, { minimum: 0 }),
  s('CUSTOM_OAUTH_EXTERNAL_URL', 'customOAuth.externalUrl', 'string', '', { pattern: '^(https?://[^\\s/]+.*)?$' }),
  s('CUSTOM_OAUTH_ALLOW_PRIVATE_URLS', 'customOAuth.allowPrivateUrls', 'bool', false),

  // SAML 2.0 single sign-on (docs/sso-saml.md#settings); the keys are checked in cross-field.ts.
  s('SAML_ENABLED', 'saml.enabled', 'bool', false),
  s('SAML_PRIVATE_KEY', 'saml.privateKey', 'string', ''),
  s('SAML_PRIVATE_KEY_NEXT', 'saml.privateKeyNext', 'string', ''),
  s('SAML_ALLOW_ENCRYPTED_ASSERTIONS', 'saml.allowEncryptedAssertions', 'bool', false),
  s('SAML_RELAY_STATE_VALIDITY_PERIOD', 'saml.relayStateValiditySeconds', 'duration', 120, { minimum: 0 }),
  onlyWhen(
    (flat) => Boolean(flat.SAML_ENABLED),
    s('SAML_EXTERNAL_URL', 'saml.externalUrl', 'string', '', { pattern: '^(https?://\\S+)?$' }),
  ),
  s('SAML_RATE_LIMIT_ASSERTION', 'rateLimit.samlAssertion', 'number', 15, { minimum: 0 }),

  // The OAuth 2.1 authorization server (docs/oauth-server.md#settings), the original's names and defaults.
  s('OAUTH_SERVER_ENABLED', 'oauthServer.enabled', 'bool', false),
  s('OAUTH_SERVER_ALLOW_DYNAMIC_REGISTRATION', 'oauthServer.allowDynamicRegistration', 'bool', false),
  s('OAUTH_SERVER_AUTHORIZATION_PATH', 'oauthServer.authorizationPath', 'string', ''),
  s('OAUTH_SERVER_AUTHORIZATION_TTL', 'oauthServer.authorizationTtlSeconds', 'duration', 600, positive),
  s('OAUTH_SERVER_DEFAULT_SCOPE', 'oauthServer.defaultScope', 'string', 'email'),

  // SCIM 2.0 (docs/scim.md): the original ships it dark, off by default, under its experimental name.
  s('EXPERIMENTAL_SCIM_ENABLED', 'scim.enabled', 'bool', false),
  // The original's experimental switches, under its names. Keyset pages for GET /admin/users (docs/api.md#get-adminusers).
  s('EXPERIMENTAL_CURSOR_PAGINATION_ENABLED', 'experimental.cursorPaginationEnabled', 'bool', false),

  // With SMTP_HOST set, a host with a scheme or port, or SMTP_PORT 0, stops the start (cross-field.ts).
  s('SMTP_HOST', 'smtp.host', 'string', ''),
  s('SMTP_PORT', 'smtp.port', 'int', 587, port),
  s('SMTP_USER', 'smtp.user', 'string', ''),
  s('SMTP_PASS', 'smtp.pass', 'string', ''),
  s('SMTP_ADMIN_EMAIL', 'smtp.adminEmail', 'string', ''),
  s('SMTP_SENDER_NAME', 'smtp.senderName', 'string', ''),
  // JSON, read by delivery/mail/smtp-headers.ts; a value it cannot read is dropped with a warning (original-corrections.ts).
  s('SMTP_HEADERS', 'smtp.headers', 'string', ''),
  // A `mail.send` log line per mail sent over SMTP (delivery/mail/transport.ts), as the original's setting.
  s('SMTP_LOGGING_ENABLED', 'smtp.loggingEnabled', 'bool', false),
  // The longest a mail or SMS send may hold its transaction open (docs/architecture.md#mail-and-sms-inside-the-transaction).
  s('SEND_TIMEOUT', 'api.sendTimeoutSeconds', 'duration', 5, positive),
  s('SMTP_MAX_FREQUENCY', 'smtp.maxFrequencySeconds', 'duration', 900, { minimum: 0 }),

  s('MAILER_AUTOCONFIRM', 'mailer.autoconfirm', 'bool', false),
  s('MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS', 'mailer.allowUnverifiedEmailSignIns', 'bool', false),
  s('MAILER_SECURE_EMAIL_CHANGE_ENABLED', 'mailer.secureEmailChangeEnabled', 'bool', true),
  s('MAILER_OTP_EXP', 'mailer.otpExpSeconds', 'duration', 86400, { minimum: 0 }),
  // Outside 6–10: 6, as the original (original-corrections.ts); so SMS_ and MFA_PHONE_OTP_LENGTH.
  s('MAILER_OTP_LENGTH', 'mailer.otpLength', 'int', 6),
  // X-Forwarded-Host values whose https://<host> replaces API_EXTERNAL_URL in mail links (docs/one-time-codes-and-mail.md#links).
  // An entry that is no host name (a URL) is dropped with a warning: it could never match (original-corrections.ts).
  s('MAILER_EXTERNAL_HOSTS', 'mailer.externalHosts', 'list', []),
  // The original's address validation before each mail (docs/one-time-codes-and-mail.md#address-validation).
  // SERVICE_HEADERS and BLOCKED_MX are JSON, read by delivery/mail/address-check.ts; a value it cannot read
  // is dropped with a warning (original-corrections.ts), as the original drops it.
  s('MAILER_EMAIL_VALIDATION_EXTENDED', 'mailer.emailValidation.extended', 'bool', false),
  s('MAILER_EMAIL_VALIDATION_SERVICE_URL', 'mailer.emailValidation.serviceUrl', 'string', ''),
  s('MAILER_EMAIL_VALIDATION_SERVICE_HEADERS', 'mailer.emailValidation.serviceHeaders', 'string', ''),
  s('MAILER_EMAIL_VALIDATION_BLOCKED_MX', 'mailer.emailValidation.blockedMx', 'string', ''),
  // ours: the name servers the DNS look-ups ask (host or host:port), empty for the system's.
  s('MAILER_EMAIL_VALIDATION_NAMESERVERS', 'mailer.emailValidation.nameservers', 'list', []),
  s('MAILER_TEMPLATE_MAX_SIZE', 'mailer.templateCache.maxBytes', 'int', 1_000_000, positive),
  s('MAILER_TEMPLATE_MAX_AGE', 'mailer.templateCache.maxAgeSeconds', 'duration', 600, { minimum: 0 }),
  s('MAILER_TEMPLATE_RETRY_INTERVAL', 'mailer.templateCache.retryIntervalSeconds', 'duration', 10, { minimum: 0 }),
  ...LINKED_MAILS.map(([env, key]) => s(`MAILER_URLPATHS_${env}`, `mailer.urlPaths.${key}`, 'string', '/verify')),
  ...mailTypes.flatMap(([env, key]) => [
    s(`MAILER_SUBJECTS_${env}`, `mailer.subjects.${key}`, 'string', defaultSubjects[key]),
    s(`MAILER_TEMPLATES_${env}`, `mailer.templates.${key}`, 'string', ''),
  ]),
  ...notificationTypes.map(([env, key]) => s(`MAILER_NOTIFICATIONS_${env}_ENABLED`, `mailer.notifications.${key}`, 'bool', false)),

  // Multi-factor authentication (docs/mfa.md#settings). Names and defaults are the original's.
  s('MFA_TOTP_ENROLL_ENABLED', 'mfa.totp.enrollEnabled', 'bool', true),
  s('MFA_TOTP_VERIFY_ENABLED', 'mfa.totp.verifyEnabled', 'bool', true),
  s('MFA_PHONE_ENROLL_ENABLED', 'mfa.phone.enrollEnabled', 'bool', false),
  s('MFA_PHONE_VERIFY_ENABLED', 'mfa.phone.verifyEnabled', 'bool', false),
  s('MFA_PHONE_OTP_LENGTH', 'mfa.phone.otpLength', 'int', 6),
  s('MFA_PHONE_TEMPLATE', 'mfa.phone.template', 'string', 'Your code is {{ .Code }}'),
  // 0 becomes 60 s, as the original (original-corrections.ts).
  s('MFA_PHONE_MAX_FREQUENCY', 'mfa.phone.maxFrequencySeconds', 'duration', 60, { minimum: 0 }),
  s('MFA_WEB_AUTHN_ENROLL_ENABLED', 'mfa.webauthn.enrollEnabled', 'bool', false),
  s('MFA_WEB_AUTHN_VERIFY_ENABLED', 'mfa.webauthn.verifyEnabled', 'bool', false),
  // A number as in the original, which compares against its whole part (mfa/enroll.ts).
  s('MFA_MAX_ENROLLED_FACTORS', 'mfa.maxEnrolledFactors', 'number', 10, { minimum: 0 }),
  s('MFA_MAX_VERIFIED_FACTORS', 'mfa.maxVerifiedFactors', 'int', 10, { minimum: 0 }),
  // Under 300 s (0 and negative values too) becomes 300 s, with a warning, as the original (original-corrections.ts).
  s('MFA_CHALLENGE_EXPIRY_DURATION', 'mfa.challengeExpirySeconds', 'duration', 300),
  s('MFA_FACTOR_EXPIRY_DURATION', 'mfa.factorExpirySeconds', 'duration', 300),
  s('MFA_RATE_LIMIT_CHALLENGE_AND_VERIFY', 'rateLimit.mfaChallengeAndVerify', 'number', 15, { minimum: 0 }),
  // Encryption of secrets at rest (TOTP secrets, phone factor codes): docs/mfa.md#secrets-at-rest.
  s('SECURITY_DB_ENCRYPTION_ENCRYPT', 'security.dbEncryption.encrypt', 'bool', false),
  s('SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID', 'security.dbEncryption.encryptionKeyId', 'string', ''),
  // Checked with ENCRYPT on, as the original; with it off an unusable key is ignored (original-corrections.ts).
  onlyWhen(
    (flat) => Boolean(flat.SECURITY_DB_ENCRYPTION_ENCRYPT),
    s('SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY', 'security.dbEncryption.encryptionKey', 'string', '', { pattern: '^([A-Za-z0-9_-]{43})?$' }),
  ),
  s('SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS', 'security.dbEncryption.decryptionKeys', 'map', {}),

  // A name no gateway has starts, as the original, and fails every send (cross-field.ts warns at start).
  s('SMS_PROVIDER', 'sms.provider', 'string', ''),
  s('SMS_AUTOCONFIRM', 'sms.autoconfirm', 'bool', false),
  s('SMS_MAX_FREQUENCY', 'sms.maxFrequencySeconds', 'duration', 60, { minimum: 0 }),
  s('SMS_OTP_EXP', 'sms.otpExpSeconds', 'duration', 60, { minimum: 0 }),
  s('SMS_OTP_LENGTH', 'sms.otpLength', 'int', 6),
  s('SMS_TEMPLATE', 'sms.template', 'string', 'Your code is {{ .Code }}'),
  s('SMS_TEST_OTP', 'sms.testOtp', 'map', {}),
  s('SMS_TEST_OTP_VALID_UNTIL', 'sms.testOtpValidUntil', 'string', ''),
  s('SMS_TWILIO_ACCOUNT_SID', 'sms.twilio.accountSid', 'string', ''),
  s('SMS_TWILIO_AUTH_TOKEN', 'sms.twilio.authToken', 'string', ''),
  s('SMS_TWILIO_MESSAGE_SERVICE_SID', 'sms.twilio.messageServiceSid', 'string', ''),
  s('SMS_TWILIO_CONTENT_SID', 'sms.twilio.contentSid', 'string', ''),
  s('SMS_TWILIO_API_BASE_URL', 'sms.twilio.apiBaseUrl', 'string', 'https://api.twilio.com', httpUrl),
  s('SMS_TWILIO_VERIFY_ACCOUNT_SID', 'sms.twilioVerify.accountSid', 'string', ''),
  s('SMS_TWILIO_VERIFY_AUTH_TOKEN', 'sms.twilioVerify.authToken', 'string', ''),
  s('SMS_TWILIO_VERIFY_MESSAGE_SERVICE_SID', 'sms.twilioVerify.messageServiceSid', 'string', ''),
  s('SMS_TWILIO_VERIFY_API_BASE_URL', 'sms.twilioVerify.apiBaseUrl', 'string', 'https://verify.twilio.com', httpUrl),
  s('SMS_MESSAGEBIRD_ACCESS_KEY', 'sms.messagebird.accessKey', 'string', ''),
  s('SMS_MESSAGEBIRD_ORIGINATOR', 'sms.messagebird.originator', 'string', ''),
  s('SMS_MESSAGEBIRD_API_BASE_URL', 'sms.messagebird.apiBaseUrl', 'string', 'https://rest.messagebird.com', httpUrl),
  s('SMS_TEXTLOCAL_API_KEY', 'sms.textlocal.apiKey', 'string', ''),
  s('SMS_TEXTLOCAL_SENDER', 'sms.textlocal.sender', 'string', ''),
  s('SMS_TEXTLOCAL_API_BASE_URL', 'sms.textlocal.apiBaseUrl', 'string', 'https://api.textlocal.in', httpUrl),
  s('SMS_VONAGE_API_KEY', 'sms.vonage.apiKey', 'string', ''),
  s('SMS_VONAGE_API_SECRET', 'sms.vonage.apiSecret', 'string', ''),
  s('SMS_VONAGE_FROM', 'sms.vonage.from', 'string', ''),
  s('SMS_VONAGE_API_BASE_URL', 'sms.vonage.apiBaseUrl', 'string', 'https://rest.nexmo.com', httpUrl),

  // The auth hooks (docs/hooks.md); URI and secrets are checked across fields in cross-field.ts (src/server/hooks/targets.ts).
  // A bare SECRETS is every hook's secrets where the hook's own are unset, as the original's loader falls
  // back to a field's bare tag name (docs/settings.md#hooks).
  ...HOOK_NAMES.flatMap((hook) => {
    const env = `HOOK_${hookEnvName(hook)}`;
    return [
      s(`${env}_ENABLED`, `hooks.${hook}.enabled`, 'bool', false),
      s(`${env}_URI`, `hooks.${hook}.uri`, 'string', ''),
      s(`${env}_SECRETS`, `hooks.${hook}.secrets`, 'pipeList', [], undefined, [`GOTRUE_${env}_SECRETS`, 'SECRETS']),
    ];
  }),
];

/** customAccessToken → CUSTOM_ACCESS_TOKEN, the original's environment spelling. */
export function hookEnvName(hook: string): string {
  return hook.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase();
}

/** Gateway credentials that must be set when SMS_PROVIDER names that gateway. */
export const SMS_REQUIRED: Record<string, string[]> = {
  twilio: ['SMS_TWILIO_ACCOUNT_SID', 'SMS_TWILIO_AUTH_TOKEN', 'SMS_TWILIO_MESSAGE_SERVICE_SID'],
  twilio_verify: ['SMS_TWILIO_VERIFY_ACCOUNT_SID', 'SMS_TWILIO_VERIFY_AUTH_TOKEN', 'SMS_TWILIO_VERIFY_MESSAGE_SERVICE_SID'],
  messagebird: ['SMS_MESSAGEBIRD_ACCESS_KEY', 'SMS_MESSAGEBIRD_ORIGINATOR'],
  textlocal: ['SMS_TEXTLOCAL_API_KEY', 'SMS_TEXTLOCAL_SENDER'],
  vonage: ['SMS_VONAGE_API_KEY', 'SMS_VONAGE_API_SECRET', 'SMS_VONAGE_FROM'],
};

/**
 * The original's settings that it reads nowhere (fields of its configuration no code uses: options of
 * log formats, of a tracer it no longer has, link paths of mails without a link) or that name its own files: accepted without the warning
 * about ignored settings, since a deployment loses nothing by them (docs/settings.md#ignored-settings).
 */
export const READ_BY_NOTHING = [
  'LOG_DISABLE_COLORS',
  'LOG_QUOTE_EMPTY_FIELDS',
  'LOG_TSFORMAT',
  'TRACING_HOST',
  'TRACING_PORT',
  'TRACING_SERVICE_NAME',
  'TRACING_TAGS',
  'DB_MIGRATIONS_PATH',
  // Handed to the original's ORM as a pool option, which it leaves unused when given DATABASE_URL (always).
  'DB_HEALTH_CHECK_PERIOD',
  // Link paths for the mails that have no link of their own (a magic link takes MAILER_URLPATHS_RECOVERY).
  ...mailTypes.filter(([env]) => !LINKED_MAILS.some(([linked]) => linked === env)).map(([env]) => `MAILER_URLPATHS_${env}`),
];
