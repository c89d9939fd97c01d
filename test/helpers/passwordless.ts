// Shared set-up of the passwordless tests: the service wired to a real SMTP server (and, when asked, the
// SMS gateway fake), plus readers for what a mail carries: its link and its six-digit code.
import { startTestService, type TestService } from './server.js';
import { startSmtpServer, type CapturedMail, type SmtpTestServer } from './smtp.js';
import { startSmsGatewayFake, twilioEnv, type SmsGatewayFake } from './sms.js';

export interface MailStack {
  api: TestService;
  smtp: SmtpTestServer;
  sms: SmsGatewayFake | null;
  stop(): Promise<void>;
}

export async function startMailStack(env: Record<string, string> = {}, options: { sms?: boolean } = {}): Promise<MailStack> {
  const smtp = await startSmtpServer();
  const sms = options.sms ? await startSmsGatewayFake() : null;
  const smsEnv: Record<string, string> = sms ? { AUTH_EXTERNAL_PHONE_ENABLED: 'true', ...twilioEnv(sms.baseUrl) } : {};
  const api = await startTestService({
    AUTH_SMTP_HOST: '127.0.0.1',
    AUTH_SMTP_PORT: String(smtp.port),
    AUTH_SMTP_ADMIN_EMAIL: 'admin@example.com',
    ...smsEnv,
    ...env,
  });
  return {
    api,
    smtp,
    sms,
    async stop() {
      await api.stop();
      await smtp.close();
      await sms?.close();
    },
  };
}

/** The six-digit code a default mail carries ("Alternatively, enter the code: 123456"). */
export function codeOf(mail: CapturedMail): string {
  const match = /enter the code: (\d{6})/.exec(mail.html);
  if (!match) throw new Error(`no code in mail: ${mail.html}`);
  return match[1];
}

/** The link of a mail as path and query on the service (the ConfirmationURL), plus its query parameters. */
export function linkOf(mail: CapturedMail): { path: string; token: string; type: string; redirectTo: string } {
  if (!mail.link) throw new Error('mail has no link');
  const url = new URL(mail.link);
  return {
    path: url.pathname + url.search,
    token: url.searchParams.get('token') ?? '',
    type: url.searchParams.get('type') ?? '',
    redirectTo: url.searchParams.get('redirect_to') ?? '',
  };
}

/** The parameters of a redirect Location's fragment. */
export function fragmentOf(location: string | null): Record<string, string> {
  if (!location) throw new Error('no Location');
  return Object.fromEntries(new URLSearchParams(location.split('#')[1] ?? ''));
}

/** A valid PKCE pair (S256). */
export async function pkcePair(): Promise<{ verifier: string; challenge: string }> {
  const { createHash, randomBytes } = await import('node:crypto');
  const verifier = randomBytes(48).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/**
 * Plants a one-time token for a user as the service would issue it (code → link token → stored hash), so
 * a test can verify it without a mail. Returns the code and the link token (token_hash).
 */
export async function plantToken(
  db: import('pg').Pool,
  userId: string,
  type: string,
  address: string,
  options: { code?: string; pkce?: boolean } = {},
): Promise<{ code: string; linkToken: string }> {
  const { otpHash, sha256Hex } = await import('../../dist/server/crypto/tokens.js');
  const code = options.code ?? String(Math.floor(Math.random() * 1e6)).padStart(6, '0');
  const linkToken = (options.pkce ? 'pkce_' : '') + otpHash(address, code);
  await db.query(
    `insert into one_time_tokens (user_id, token_type, token_hash, relates_to) values ($1, $2, $3, $4)
    on conflict (user_id, token_type) do update
      set token_hash = excluded.token_hash, relates_to = excluded.relates_to, attempts = 0, created_at = now()`,
    [userId, type, sha256Hex(linkToken), address],
  );
  return { code, linkToken };
}

/** Inserts a user directly (the states verify starts from) and returns its id. */
export async function insertUser(
  db: import('pg').Pool,
  fields: { email?: string; phone?: string; confirmed?: boolean; invited?: boolean; banned?: boolean },
): Promise<string> {
  const provider = fields.email ? 'email' : 'phone';
  const {
    rows: [row],
  } = await db.query(
    `insert into users (aud, role, email, phone, encrypted_password, email_confirmed_at, phone_confirmed_at,
      invited_at, banned_until, raw_app_meta_data, raw_user_meta_data)
    values ('authenticated', 'authenticated', $1, $2, null, $3, $4, $5, $6, $7, '{}') returning id`,
    [
      fields.email ?? null,
      fields.phone ?? null,
      fields.confirmed && fields.email ? new Date() : null,
      fields.confirmed && fields.phone ? new Date() : null,
      fields.invited ? new Date() : null,
      fields.banned ? new Date(Date.now() + 3600_000) : null,
      { provider, providers: [provider] },
    ],
  );
  await db.query(`insert into identities (provider_id, user_id, identity_data, provider) values ($1::text, $1::uuid, $2, $3)`, [
    row.id,
    { sub: row.id, ...(fields.email ? { email: fields.email } : { phone: fields.phone }), email_verified: false, phone_verified: false },
    provider,
  ]);
  return row.id;
}
