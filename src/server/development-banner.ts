// What the development setup prints once it is up: plain text on stderr, for a person at a terminal (the
// log keeps its one-line JSON notice). It names what was read from the environment, where the data lives,
// and the anon and service_role keys signed with the generated secret, as `supabase start` prints them,
// so a client can be pointed at the service at once.
import path from 'node:path';
import type { Config } from './config/types.js';
import { createJwtService } from './auth/jwt.js';
import { VERSION } from './version.js';

const TEN_YEARS = 10 * 365 * 86_400;

export async function developmentBanner(config: Config): Promise<string> {
  const jwt = createJwtService(config.jwt);
  const iat = Math.floor(Date.now() / 1000);
  // An AWS KMS signing key may be out of reach: the banner says so rather than stopping the start.
  const key = (role: string) =>
    jwt
      .sign({ ...(config.jwt.issuer ? { iss: config.jwt.issuer } : {}), role, iat, exp: iat + TEN_YEARS })
      .catch((err: Error) => `(not signed: ${err.cause instanceof Error ? err.cause.message : err.message})`);
  const [anon, serviceRole] = await Promise.all([key('anon'), key('service_role')]);
  const read = Object.values(config.sources).sort();
  const mail = config.smtp.host ? `SMTP ${config.smtp.host}:${config.smtp.port}` : 'written to the log (no SMTP_HOST)';
  const sms = config.sms.provider ? `the ${config.sms.provider} gateway` : 'written to the log (no SMS_PROVIDER)';
  return [
    '',
    `*** Portcullis ${VERSION}: DEVELOPMENT SETUP (not for production) ***`,
    '',
    `  API URL           ${config.api.externalUrl}`,
    `  site URL          ${config.siteUrl}`,
    `  database          embedded PostgreSQL in ${path.join(config.dataDir, 'pg')} (no DATABASE_URL)`,
    `  JWT secret        generated once, kept in ${path.join(config.dataDir, 'jwt-secret')}`,
    `  mail              ${mail}`,
    `  SMS               ${sms}`,
    `  environment read  ${read.length ? read.join(', ') : '(nothing: every setting has its default)'}`,
    '',
    `  anon key          ${anon}`,
    `  service_role key  ${serviceRole}`,
    '',
    '  For production set DATABASE_URL, JWT_SECRET, SITE_URL and API_EXTERNAL_URL (README: Production).',
    '',
  ].join('\n');
}
