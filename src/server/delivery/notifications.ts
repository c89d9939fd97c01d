// Account-change notifications (docs/one-time-codes-and-mail.md#account-change-notifications): a mail
// telling the user that their password, email, phone, sign-in methods or MFA factors changed, each behind
// its MAILER_NOTIFICATIONS_<X>_ENABLED switch (all off by default), as the original sends them.
//
// Unlike a mail that carries a token, a notification is not part of the change: the original only logs
// when one cannot be sent. So it goes out after the change committed, never from inside its transaction
// (no row lock or pooled connection waits on SMTP), the answer waits for it at most SEND_TIMEOUT, and a
// refusal, a timeout, a spent RATE_LIMIT_EMAIL_SENT or a failing send email hook is logged, never answered.
import type { UserRow } from '../../db/users.js';
import { isAuthorizedRecipient } from './authorized-addresses.js';
import type { AppContext } from '../context.js';
import type { NotificationSwitches } from '../config/types.js';
import type { ApiRequest } from '../http/types.js';
import { redirectTarget } from '../http/redirect-target.js';
import { emailData, EMAIL_ACTION_TYPES, sendEmailHook } from '../hooks/send-email.js';
import { takeSendPermit } from '../limits/sends.js';
import { bounded } from './send-token.js';
import type { TemplateKind } from './mail/mailer.js';

export type NotificationKind = keyof NotificationSwitches;

/** What one notification says; the fields a kind does not use stay empty. */
export interface Notification {
  kind: NotificationKind;
  /** the user as the change left them: the hook's `user`, the template's Email and Data */
  user: UserRow;
  /** the recipient when it is not the user's (new) email: the old address of an email change or unlink */
  to?: string;
  oldEmail?: string;
  oldPhone?: string;
  provider?: string;
  factorType?: string;
}

const TEMPLATE: Record<NotificationKind, TemplateKind> = {
  passwordChanged: 'passwordChangedNotification',
  emailChanged: 'emailChangedNotification',
  phoneChanged: 'phoneChangedNotification',
  identityLinked: 'identityLinkedNotification',
  identityUnlinked: 'identityUnlinkedNotification',
  mfaFactorEnrolled: 'mfaFactorEnrolledNotification',
  mfaFactorUnenrolled: 'mfaFactorUnenrolledNotification',
};

/**
 * The notification when its switch is on and it has somewhere to go (the user has an email, or `to` is
 * given), else none: callers collect these while they write and send them after the commit.
 */
export function notice(ctx: Pick<AppContext, 'config'>, n: Notification): Notification[] {
  if (!ctx.config.mailer.notifications[n.kind]) return [];
  return recipientOf(n) ? [n] : [];
}

const recipientOf = (n: Notification): string => n.to ?? n.user.email ?? '';

/** The email and phone notifications of an address change, as the original decides them (both sides set, different). */
export function addressChangeNotices(
  ctx: Pick<AppContext, 'config'>,
  before: UserRow,
  after: UserRow,
  provider: 'email' | 'phone',
  identityCreated: boolean,
): Notification[] {
  if (provider === 'email') {
    const changed = !!before.email && !!after.email && before.email !== after.email;
    return changed ? notice(ctx, { kind: 'emailChanged', user: after, to: before.email!, oldEmail: before.email! }) : [];
  }
  const changed = !!before.phone && !!after.phone && before.phone !== after.phone;
  return [
    ...(changed ? notice(ctx, { kind: 'phoneChanged', user: after, oldPhone: before.phone! }) : []),
    // A phone change that gave the user their first phone identity links a sign-in method, as the original tells.
    ...(identityCreated ? notice(ctx, { kind: 'identityLinked', user: after, provider: 'phone' }) : []),
  ];
}

/** Sends each notification, one after the other; resolves when all are sent or given up, never rejects. */
export async function sendNotifications(
  ctx: AppContext,
  req: Pick<ApiRequest, 'headers' | 'form' | 'ip'>,
  notifications: Notification[],
): Promise<void> {
  for (const n of notifications) await sendNotification(ctx, req, n);
}

async function sendNotification(ctx: AppContext, req: Pick<ApiRequest, 'headers' | 'form' | 'ip'>, n: Notification): Promise<void> {
  const template = TEMPLATE[n.kind];
  const type = EMAIL_ACTION_TYPES[template];
  const to = recipientOf(n);
  let attempted = false;
  let timedOut = false;
  if (!isAuthorizedRecipient(ctx, to)) {
    ctx.log.warn(
      { kind: type, userId: n.user.id },
      'account-change notification not sent: its address is not in EXTERNAL_EMAIL_AUTHORIZED_ADDRESSES',
    );
    return;
  }
  try {
    // Counted like every mail (not with MAILER_AUTOCONFIRM), on the pool: no transaction is open here.
    await takeSendPermit(ctx, ctx.db, 'email');
    if (ctx.config.hooks.sendEmail.enabled) {
      const data = emailData(ctx, req, template, {
        redirect_to: redirectTarget(req, ctx),
        old_email: n.oldEmail ?? '',
        old_phone: n.oldPhone ?? '',
        provider: n.provider ?? '',
        factor_type: n.factorType ?? '',
      });
      // Not the request's signal: the change is done, and its notification is due even if the client left.
      await sendEmailHook(ctx, n.user, data, { ip: req.ip });
      return;
    }
    attempted = true;
    const send = ctx.mailer.send(template, to, {
      SiteURL: ctx.config.siteUrl,
      Email: n.kind === 'identityUnlinked' ? to : (n.user.email ?? ''),
      ConfirmationURL: '',
      Token: '',
      TokenHash: '',
      RedirectTo: '',
      Data: n.user.raw_user_meta_data,
      OldEmail: n.oldEmail ?? '',
      Phone: n.user.phone ?? '',
      OldPhone: n.oldPhone ?? '',
      Provider: n.provider ?? '',
      FactorType: n.factorType ?? '',
    });
    await bounded(ctx, send, () => {
      timedOut = true;
      return new Error('no answer from the mail server within SEND_TIMEOUT');
    });
    ctx.metrics.sent('email', 'sent', type);
  } catch (err) {
    if (attempted) ctx.metrics.sent('email', timedOut ? 'timeout' : 'failed', type);
    ctx.log.warn({ err, kind: type, userId: n.user.id }, 'sending an account-change notification failed; the change stands');
  }
}
