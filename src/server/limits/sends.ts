// Limits on sending mail and SMS (docs/one-time-codes-and-mail.md#global-send-limits, docs/one-time-codes-and-mail.md#send-intervals): a per-user minimum interval between sends,
// and global counters shared by every thread and instance (rate_limits in Postgres). The counters are
// taken on the pool, never inside a transaction (sending-tx.ts says why), hence pg.Pool, not a Queryable.
import type pg from 'pg';
import { apiError } from '../errors.js';
import { takeFromBucket, takeFromWindow } from '../../db/rate-limits.js';
import type { SendLimit } from '../config/types.js';
import type { AppContext } from '../context.js';

export type Channel = 'email' | 'sms';

const INTERVAL = { email: 'email_send_interval', sms: 'sms_send_interval' } as const;
const EXCEEDED = { email: 'over_email_send_rate_limit', sms: 'over_sms_send_rate_limit' } as const;

/**
 * 429 when the previous send to this user was less than `minSeconds` ago. The message names the whole
 * seconds left, truncated as the original's; Retry-After rounds up, so a client that waits it is not refused.
 */
export function assertSendInterval(channel: Channel, lastSentAt: Date | null, minSeconds: number, now = Date.now()): void {
  if (!lastSentAt) return;
  const remainingMs = lastSentAt.getTime() + minSeconds * 1000 - now;
  if (remainingMs > 0) {
    throw apiError(
      INTERVAL[channel],
      `For security purposes, you can only request this after ${Math.floor(remainingMs / 1000)} seconds.`,
    ).retryAfter(remainingMs / 1000);
  }
}

async function take(pool: pg.Pool, key: string, limit: SendLimit): Promise<boolean> {
  return limit.bucket
    ? takeFromBucket(pool, key, limit.max, limit.periodSeconds)
    : takeFromWindow(pool, key, limit.max, limit.periodSeconds);
}

/**
 * Whether a send on `channel` counts against RATE_LIMIT_EMAIL_SENT / RATE_LIMIT_SMS_SENT: not with
 * MAILER_AUTOCONFIRM / SMS_AUTOCONFIRM, as the original, except that an email limit of 0 counts (and so
 * refuses) every mail, autoconfirm or not: the original's switch that turns mail off.
 */
export function countsAgainstLimit(ctx: AppContext, channel: Channel): boolean {
  if (channel === 'sms') return !ctx.config.sms.autoconfirm;
  return !ctx.config.mailer.autoconfirm || ctx.config.rateLimit.emailSent.max === 0;
}

/** Counts one outgoing mail or SMS against its limit (countsAgainstLimit); 429 when the limit is spent. */
export async function takeSendPermit(ctx: AppContext, pool: pg.Pool, channel: Channel): Promise<void> {
  if (!countsAgainstLimit(ctx, channel)) return;
  const limit = channel === 'email' ? ctx.config.rateLimit.emailSent : ctx.config.rateLimit.smsSent;
  if (!(await take(pool, `${channel}_sent`, limit))) throw apiError(EXCEEDED[channel]);
}
