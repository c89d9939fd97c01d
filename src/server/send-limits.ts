// Limits on sending mail and SMS (REFERENCE §5.2, §5.3): a per-user minimum interval between sends,
// and global counters shared by every thread and instance (rate_limits in Postgres).
import { ApiError } from './errors.js';
import { takeFromBucket, takeFromWindow } from '../db/rate-limits.js';
import type { SendLimit } from './config-types.js';
import type { AppContext } from './app.js';

export type Channel = 'email' | 'sms';

const CODE = { email: 'over_email_send_rate_limit', sms: 'over_sms_send_rate_limit' } as const;

/** 429 when the previous send to this user was less than `minSeconds` ago. */
export function assertSendInterval(channel: Channel, lastSentAt: Date | null, minSeconds: number, now = Date.now()): void {
  if (!lastSentAt) return;
  const remainingMs = lastSentAt.getTime() + minSeconds * 1000 - now;
  if (remainingMs > 0) {
    throw new ApiError(429, CODE[channel], `For security purposes, you can only request this after ${Math.ceil(remainingMs / 1000)} seconds.`)
      .retryAfter(remainingMs / 1000);
  }
}

async function take(ctx: AppContext, key: string, limit: SendLimit): Promise<boolean> {
  return limit.bucket
    ? takeFromBucket(ctx.db, key, limit.max, limit.periodSeconds)
    : takeFromWindow(ctx.db, key, limit.max, limit.periodSeconds);
}

/** Counts one outgoing mail against RATE_LIMIT_EMAIL_SENT (skipped with MAILER_AUTOCONFIRM, as the original). */
export async function takeEmailSend(ctx: AppContext): Promise<void> {
  if (ctx.config.mailer.autoconfirm) return;
  if (!await take(ctx, 'email_sent', ctx.config.rateLimit.emailSent)) {
    throw new ApiError(429, 'over_email_send_rate_limit', 'email rate limit exceeded');
  }
}

/** Counts one outgoing SMS against RATE_LIMIT_SMS_SENT (skipped with SMS_AUTOCONFIRM). */
export async function takeSmsSend(ctx: AppContext): Promise<void> {
  if (ctx.config.sms.autoconfirm) return;
  if (!await take(ctx, 'sms_sent', ctx.config.rateLimit.smsSent)) {
    throw new ApiError(429, 'over_sms_send_rate_limit', 'SMS rate limit exceeded');
  }
}
