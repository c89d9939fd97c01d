// Outgoing mail: picks the subject and the HTML template of a kind of mail, fills in its variables,
// and hands it to SMTP (or to the log when no SMTP_HOST is configured). Callers build the variables
// (ConfirmationURL via buildConfirmationUrl). A mail carrying a token turns a rejected send into a 500
// (send-token.ts): the user would wait for a mail that is not coming. An account-change notification's
// failure is only logged (delivery/notifications.ts), as the original does.
import type { Logger } from 'pino';
import type { Config, MailTemplateSet } from '../../config/types.js';
import { DEFAULT_TEMPLATES } from './defaults.js';
import { logDelivery, smtpDelivery, type ComposedMail, type Delivery } from './transport.js';
import { lookupIn, renderGoTemplate } from './go-template.js';
import { renderMailBody } from './render-body.js';
import { htmlToText } from './plain-text.js';
import { TemplateCache } from './template-cache.js';
import { createAddressCheck, MailAddressRefused } from './address-check.js';
import type { AddressFault } from './address-rules.js';

export { buildConfirmationUrl, linkPathFor, VERIFICATION_TYPES } from './links.js';
export { MailAddressRefused } from './address-check.js';
export type { ConfirmationUrlParts, LinkKind } from './links.js';

/** The mails that carry a one-time token. */
export type MailKind = 'invite' | 'confirmation' | 'recovery' | 'magicLink' | 'emailChange' | 'reauthentication';
/** Every kind of mail with its own subject and template: the token mails and the account-change notifications. */
export type TemplateKind = keyof MailTemplateSet<string>;

/** The variables templates may use; the names are the original service's (users' templates use them). */
export interface MailVars {
  SiteURL: string;
  Email: string;
  /** '' for reauthentication, which carries only a code */
  ConfirmationURL: string;
  /** the one-time code */
  Token: string;
  TokenHash: string;
  RedirectTo: string;
  /** the user's user_metadata, reachable as {{ .Data.key }} */
  Data: Record<string, unknown>;
  /** email change only */
  NewEmail?: string;
  /** email change only: the address this copy goes to */
  SendingTo?: string;
  /** notifications (delivery/notifications.ts): what the change replaced or added */
  OldEmail?: string;
  Phone?: string;
  OldPhone?: string;
  Provider?: string;
  FactorType?: string;
}

export interface Mailer {
  /**
   * Sends one mail; rejects with MailAddressRefused when MAILER_EMAIL_VALIDATION_* refuses the recipient
   * (nothing is sent), and with MailSendError when the SMTP server refuses the mail or cannot be reached.
   */
  send(kind: TemplateKind, to: string, vars: MailVars): Promise<{ messageId: string }>;
  /**
   * Whether MAILER_EMAIL_VALIDATION_* must still ask the network about `to` before a mail can go to it
   * (false when no check is configured, or its verdict is remembered).
   */
  needsAddressCheck(to: string): boolean;
  /**
   * Runs that check now (unless its verdict is remembered) and remembers its verdict, which it resolves
   * (null: valid or unchecked); a refusal is not thrown here but by send().
   */
  checkAddress(to: string): Promise<AddressFault | null>;
  close(): Promise<void>;
}

export class MailSendError extends Error {
  override readonly name = 'MailSendError';
}

export type MailerConfig = Pick<Config, 'smtp' | 'mailer' | 'siteUrl' | 'development' | 'api'>;

export function createMailer(config: MailerConfig, log: Logger): Mailer {
  const delivery: Delivery = config.smtp.host
    ? smtpDelivery(config.smtp, config.api.sendTimeoutSeconds * 1000, log)
    : logDelivery(config.development, log);
  const { templateCache } = config.mailer;
  const templates = new TemplateCache({
    siteUrl: config.siteUrl,
    log,
    maxBytes: templateCache.maxBytes,
    maxAgeMs: templateCache.maxAgeSeconds * 1000,
    retryAfterMs: templateCache.retryIntervalSeconds * 1000,
  });
  const checkAddress = createAddressCheck(config.mailer.emailValidation);

  async function compose(kind: TemplateKind, to: string, vars: MailVars): Promise<ComposedMail> {
    const lookup = lookupIn({
      OldEmail: '',
      Phone: '',
      OldPhone: '',
      Provider: '',
      FactorType: '',
      ...vars,
      NewEmail: vars.NewEmail ?? '',
      SendingTo: vars.SendingTo ?? to,
    });
    // Subjects are plain text headers: filled in but not HTML-escaped (an '&' must stay an '&').
    const subject = renderGoTemplate(config.mailer.subjects[kind], lookup);
    const base = { kind, to, subject, link: vars.ConfirmationURL, code: vars.Token };
    if (!delivery.needsBody) return { ...base, html: '', text: '' };
    const location = config.mailer.templates[kind];
    const template = (location && (await templates.get(location))) || DEFAULT_TEMPLATES[kind];
    const html = renderMailBody(template, DEFAULT_TEMPLATES[kind], lookup, log);
    return { ...base, html, text: htmlToText(html) };
  }

  return {
    async send(kind, to, vars) {
      const fault = await checkAddress?.verdict(to);
      if (fault) throw new MailAddressRefused(to, fault);
      try {
        return await delivery.deliver(await compose(kind, to, vars));
      } catch (err) {
        throw new MailSendError(`sending the ${kind} mail failed: ${(err as Error).message}`, { cause: err });
      }
    },
    needsAddressCheck: (to) => !!checkAddress && checkAddress.known(to) === undefined,
    async checkAddress(to) {
      return (await checkAddress?.verdict(to)) ?? null;
    },
    async close() {
      await templates.idle();
      delivery.close();
    },
  };
}
