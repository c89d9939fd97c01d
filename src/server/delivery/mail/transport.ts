// The two ways a composed mail leaves the service: over SMTP (nodemailer), or, with no SMTP_HOST, into
// the log. The log path exists so the embedded development setup works end to end without a mail
// server (docs/one-time-codes-and-mail.md#delivery); outside development it only records that a mail was dropped, because a sign-in
// link or code in production logs would be a credential anyone with log access could use.
import { randomUUID } from 'node:crypto';
import type { Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import type { Config } from '../../config/types.js';
import { headerFieldsFor, messageTypeOf, parseSmtpHeaders } from './smtp-headers.js';

export interface ComposedMail {
  kind: string;
  to: string;
  subject: string;
  html: string;
  text: string;
  /** for the log only: the link and the code, so a developer can act on a mail that was not sent */
  link: string;
  code: string;
}

export interface Delivery {
  deliver(mail: ComposedMail): Promise<{ messageId: string }>;
  close(): void;
  /** whether deliver() needs html/text (the log delivery does not, so templates are not fetched) */
  readonly needsBody: boolean;
}

/**
 * `timeoutMs` (SEND_TIMEOUT) bounds each phase of the SMTP exchange; send-token.ts bounds the whole send.
 * nodemailer loads with the first mail, not with every HTTP thread: a thread starts that much sooner, and
 * most of its requests send none.
 */
export function smtpDelivery(smtp: Config['smtp'], timeoutMs: number, log: Logger): Delivery {
  // An IPv6 SMTP_HOST comes in brackets, as the original joins it with the port; nodemailer takes it bare.
  const host = smtp.host.replace(/^\[(.*)\]$/, '$1');
  const secure = smtp.port === 465; // implicit TLS; other ports upgrade with STARTTLS when offered
  let transport: Promise<Transporter> | null = null;
  const open = () =>
    (transport ??= import('nodemailer').then(({ default: nodemailer }) =>
      nodemailer.createTransport({
        pool: true,
        host,
        port: smtp.port,
        secure,
        auth: smtp.user ? { user: smtp.user, pass: smtp.pass } : undefined,
        requireTLS: loginNeedsTls(smtp.user, host, secure),
        // nodemailer's defaults (2 min to connect, 10 min idle socket) would hold an HTTP request, and the
        // transaction it sends from, that long behind a dead mail server; fail within SEND_TIMEOUT instead.
        connectionTimeout: timeoutMs,
        greetingTimeout: timeoutMs,
        socketTimeout: timeoutMs,
      }),
    ));
  // Without SMTP_SENDER_NAME, the bare address, as the original's FormatAddress writes it.
  const from = { name: smtp.senderName, address: smtp.adminEmail };
  const fromText = smtp.senderName ? `${JSON.stringify(smtp.senderName)} <${smtp.adminEmail}>` : smtp.adminEmail;
  const headers = smtp.headers ? parseSmtpHeaders(smtp.headers) : null;
  return {
    needsBody: true,
    async deliver(mail) {
      // An address object, not a string: nodemailer parses a string as an address *list*, and a
      // recipient must never be able to turn into several.
      const to = { name: '', address: mail.to };
      try {
        const info = await (
          await open()
        ).sendMail({
          from,
          to,
          subject: mail.subject,
          html: mail.html,
          text: mail.text,
          ...(headers ? { headers: headerFieldsFor(headers, mail.kind) } : {}),
        });
        return { messageId: info.messageId };
      } finally {
        // SMTP_LOGGING_ENABLED: after every attempt, sent or not, as the original logs it.
        if (smtp.loggingEnabled) {
          log.info({ event: 'mail.send', mail_type: messageTypeOf(mail.kind), mail_from: fromText, mail_to: mail.to }, 'mail.send');
        }
      }
    },
    // A transport that never loaded has nothing to close (and its failure was the sends' to report).
    close: () =>
      void transport?.then(
        (t) => t.close(),
        () => {},
      ),
  };
}

/**
 * Go's smtp.PlainAuth, which the original logs in with, sends a password over a plaintext session only to
 * these names; nodemailer sends it to any relay that offers no STARTTLS (or whose offer a man in the middle
 * removed), in clear.
 */
const PLAINTEXT_LOGIN_HOSTS = new Set(['localhost', '127.0.0.1', '::1']);

/**
 * With SMTP_USER set, a session to any other relay must upgrade with STARTTLS before the login, or the mail
 * fails (docs/one-time-codes-and-mail.md#delivery): SMTP_PASS never crosses the network in clear.
 */
function loginNeedsTls(user: string, host: string, secure: boolean): boolean {
  return !!user && !secure && !PLAINTEXT_LOGIN_HOSTS.has(host.toLowerCase());
}

export function logDelivery(development: boolean, log: Logger): Delivery {
  if (development) {
    log.warn(
      'DEVELOPMENT SETUP: no SMTP_HOST, so outgoing mail is NOT sent; each mail (recipient, subject, link, code) is written to this log instead',
    );
  } else {
    log.warn('no SMTP_HOST: outgoing mail is DROPPED (recipient and subject are logged); set AUTH_SMTP_HOST to send mail');
  }
  return {
    needsBody: false,
    deliver(mail) {
      const messageId = `<${randomUUID()}@portcullis.invalid>`;
      if (development) {
        log.info(
          { mail: { kind: mail.kind, to: mail.to, subject: mail.subject, link: mail.link, code: mail.code }, messageId },
          'mail not sent (development, no SMTP_HOST): %s to %s',
          mail.kind,
          mail.to,
        );
      } else {
        log.info({ mail: { kind: mail.kind, to: mail.to, subject: mail.subject }, messageId }, 'mail dropped (no SMTP_HOST)');
      }
      return Promise.resolve({ messageId });
    },
    close: () => undefined,
  };
}
