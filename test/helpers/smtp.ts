// A real SMTP server for tests (smtp-server + mailparser): the service under test sends to it over
// a socket exactly as it would to a production relay. No TLS, any (or no) login accepted.
import { simpleParser, type AddressObject, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { createInbox } from './inbox.js';

export interface CapturedMail {
  /** the first address of the To header */
  to: string;
  /** envelope recipients (RCPT TO) */
  envelopeTo: string[];
  /** the From header, decoded, e.g. `"Portcullis" <admin@example.com>` */
  from: string;
  fromAddress: string;
  fromName: string;
  subject: string;
  html: string;
  text: string;
  /** the first link (`href`) of the html body, entities decoded; null when there is none */
  link: string | null;
  /** the login the client used, if any */
  auth: { username: string; password: string } | null;
  parsed: ParsedMail;
}

export interface SmtpTestServer {
  port: number;
  mails: CapturedMail[];
  /** The next mail to `to` (or matching `predicate`) not yet returned; rejects after timeoutMs (default 5000). */
  waitForMail(match: string | ((mail: CapturedMail) => boolean), timeoutMs?: number): Promise<CapturedMail>;
  /** Refuse the next recipient with `code message`, as a relay that rejects the address would. */
  failNext(code?: number, message?: string): void;
  /** Hold every message's 250 reply until release() (a relay that stalls); `held` counts those waiting. */
  stall(): void;
  release(): void;
  readonly held: number;
  /** every login a client sent (AUTH), whether or not a mail followed */
  readonly logins: Array<{ username: string; password: string }>;
  close(): Promise<void>;
}

export interface SmtpOptions {
  /** each message's 250 reply comes this many ms after it was received (a slow relay) */
  delayMs?: number;
  /** the address to listen on; default 127.0.0.1 */
  host?: string;
}

export async function startSmtpServer(options: SmtpOptions = {}): Promise<SmtpTestServer> {
  let stalled: Array<() => void> | null = null;
  const inbox = createInbox<CapturedMail>((m) => `${m.to}: ${m.subject}`);
  const failures: Array<{ code: number; message: string }> = [];
  const logins = new Map<string, { username: string; password: string }>();
  const allLogins: Array<{ username: string; password: string }> = [];

  const server = new SMTPServer({
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    closeTimeout: 1000,
    onAuth(auth, session, callback) {
      logins.set(session.id, { username: auth.username ?? '', password: auth.password ?? '' });
      allLogins.push({ username: auth.username ?? '', password: auth.password ?? '' });
      callback(null, { user: auth.username });
    },
    onRcptTo(_address, _session, callback) {
      const failure = failures.shift();
      if (!failure) return callback();
      callback(Object.assign(new Error(failure.message), { responseCode: failure.code }));
    },
    onData(stream, session, callback) {
      // The 250 reply waits for parsing, so once the client's send resolves the mail is in `mails`.
      simpleParser(stream).then((parsed) => {
        const accept = () => {
          inbox.add(
            capture(
              parsed,
              session.envelope.rcptTo.map((r) => r.address),
              logins.get(session.id) ?? null,
            ),
          );
          callback();
        };
        const answer = () => (stalled ? stalled.push(accept) : accept());
        if (options.delayMs) setTimeout(answer, options.delayMs);
        else answer();
      }, callback);
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.server.address();
  if (address === null || typeof address === 'string') throw new Error('smtp test server has no port');

  return {
    port: address.port,
    mails: inbox.items,
    waitForMail(match, timeoutMs = 5000) {
      const predicate =
        typeof match === 'string'
          ? (m: CapturedMail) => m.to.toLowerCase() === match.toLowerCase() || m.envelopeTo.includes(match.toLowerCase())
          : match;
      return inbox.waitFor(predicate, timeoutMs, typeof match === 'string' ? `mail to ${match}` : 'matching mail');
    },
    failNext(code = 550, message = 'Mailbox unavailable') {
      failures.push({ code, message });
    },
    stall() {
      stalled ??= [];
    },
    release() {
      const waiting = stalled ?? [];
      stalled = null;
      for (const accept of waiting) accept();
    },
    get held() {
      return stalled?.length ?? 0;
    },
    logins: allLogins,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function capture(parsed: ParsedMail, envelopeTo: string[], auth: CapturedMail['auth']): CapturedMail {
  const to = firstAddress(parsed.to);
  const from = firstAddress(parsed.from);
  const html = parsed.html || '';
  return {
    to: to?.address ?? '',
    envelopeTo: envelopeTo.map((a) => a.toLowerCase()),
    from: (Array.isArray(parsed.from) ? parsed.from[0] : parsed.from)?.text ?? '',
    fromAddress: from?.address ?? '',
    fromName: from?.name ?? '',
    subject: parsed.subject ?? '',
    html,
    text: parsed.text ?? '',
    link: firstLink(html),
    auth,
    parsed,
  };
}

function firstAddress(field: AddressObject | AddressObject[] | undefined): { address?: string; name: string } | undefined {
  const object = Array.isArray(field) ? field[0] : field;
  return object?.value[0];
}

/** The first `href` of an HTML text, with HTML entities decoded (`&amp;` → `&`). */
export function firstLink(html: string): string | null {
  const match = /<a\b[^>]*?\bhref\s*=\s*(["'])(.*?)\1/is.exec(html);
  if (!match) return null;
  return match[2].replace(
    /&(amp|lt|gt|quot|#34|#39);/g,
    (_, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#34': '"', '#39': "'" })[name] ?? '',
  );
}
