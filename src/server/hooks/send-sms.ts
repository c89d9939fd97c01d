// The send SMS hook (docs/hooks.md#send-sms): when enabled it replaces the SMS gateway. The hook gets the user
// and the code (with the phone it goes to); its failure fails the request and rolls back the code.
import type { Queryable } from '../../db/pool.js';
import type { UserRow } from '../../db/users.js';
import type { AppContext } from '../context.js';
import { hookUserJson } from './hook-user.js';
import { noOutput } from './answer.js';
import { invokeHook, type HookRequest } from './invoke.js';

export async function sendSmsHook(
  ctx: Pick<AppContext, 'config' | 'db' | 'log'>,
  user: UserRow,
  sms: { otp: string; phone: string; smsType?: 'mfa' },
  req: HookRequest,
  q?: Queryable,
): Promise<void> {
  // sms_type names an MFA challenge's code, as the original; sign-in and verification codes carry none there.
  const payload = sms.smsType ? { otp: sms.otp, sms_type: sms.smsType, phone: sms.phone } : { otp: sms.otp, phone: sms.phone };
  await invokeHook(ctx, 'sendSms', { user: await hookUserJson(ctx, user, q), sms: payload }, req, noOutput, q);
}
