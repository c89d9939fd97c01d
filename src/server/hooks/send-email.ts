// The send email hook (docs/hooks.md#send-email): when enabled it replaces SMTP. The hook gets the user and
// the token data the mail would have carried, and sends (or not) as it sees fit; its failure fails the
// request and rolls back the token, as a failed SMTP send does. An account-change notification reaches it
// too, after the change committed; its failure is only logged (delivery/notifications.ts).
import type { Queryable } from '../../db/pool.js';
import type { UserRow } from '../../db/users.js';
import type { AppContext } from '../context.js';
import type { TemplateKind } from '../delivery/mail/mailer.js';
import { mailLinkBase, type LinkBaseRequest } from '../delivery/mail/link-base.js';
import { hookUserJson } from './hook-user.js';
import { noOutput } from './answer.js';
import { invokeHook, type HookRequest } from './invoke.js';

/** email_action_type as the original names each mail. */
export const EMAIL_ACTION_TYPES: Record<TemplateKind, string> = {
  confirmation: 'signup',
  invite: 'invite',
  magicLink: 'magiclink',
  recovery: 'recovery',
  emailChange: 'email_change',
  reauthentication: 'reauthentication',
  passwordChangedNotification: 'password_changed_notification',
  emailChangedNotification: 'email_changed_notification',
  phoneChangedNotification: 'phone_changed_notification',
  identityLinkedNotification: 'identity_linked_notification',
  identityUnlinkedNotification: 'identity_unlinked_notification',
  mfaFactorEnrolledNotification: 'mfa_factor_enrolled_notification',
  mfaFactorUnenrolledNotification: 'mfa_factor_unenrolled_notification',
};

/** The original's mailer.EmailData. */
export interface EmailData {
  token: string;
  token_hash: string;
  redirect_to: string;
  email_action_type: string;
  site_url: string;
  token_new: string;
  token_hash_new: string;
  old_email: string;
  old_phone: string;
  provider: string;
  factor_type: string;
}

export function emailData(
  ctx: Pick<AppContext, 'config'>,
  req: LinkBaseRequest,
  kind: TemplateKind,
  fields: Partial<Omit<EmailData, 'email_action_type' | 'site_url'>>,
): EmailData {
  return {
    token: '',
    token_hash: '',
    redirect_to: '',
    email_action_type: EMAIL_ACTION_TYPES[kind],
    // The original sends the base of this request's /verify links here, not SITE_URL.
    site_url: mailLinkBase(ctx.config, req),
    token_new: '',
    token_hash_new: '',
    old_email: '',
    old_phone: '',
    provider: '',
    factor_type: '',
    ...fields,
  };
}

export async function sendEmailHook(
  ctx: Pick<AppContext, 'config' | 'db' | 'log'>,
  user: UserRow,
  data: EmailData,
  req: HookRequest,
  q?: Queryable,
): Promise<void> {
  await invokeHook(ctx, 'sendEmail', { user: await hookUserJson(ctx, user, q), email_data: data }, req, noOutput, q);
}
