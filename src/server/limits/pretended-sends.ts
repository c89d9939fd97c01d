// The send interval of an address with no account (docs/one-time-codes-and-mail.md#send-intervals): a
// known address asked twice within SMTP_MAX_FREQUENCY / SMS_MAX_FREQUENCY answers 429 the second time,
// so an unknown one, for which the service only pretends to send, must too, or two requests would tell
// which addresses have accounts. Its pretended sends are remembered (src/db/pretended-sends.ts) under an
// HMAC of the address, so the table lists no addresses and nobody without the key can test one against it.
import { createHmac } from 'node:crypto';
import { derivedKey } from '../crypto/tokens.js';
import { PRETENDED_SEND_PREFIX, lastPretendedSend, recordPretendedSend } from '../../db/pretended-sends.js';
import { childSecretOf } from '../sessions/child-token.js';
import { assertSendInterval, type Channel } from './sends.js';
import type { Queryable } from '../../db/pool.js';
import type { AppContext } from '../context.js';

/**
 * What was pretended, as the user column whose time a known address is checked against: sends that share
 * a column share an interval (recovery: /recover and the magic link).
 */
export type PretendedSendKind = 'recovery' | 'confirmation';

export interface PretendedSend {
  kind: PretendedSendKind;
  channel: Channel;
  /** the normalised address, as the lookup that found no one used it */
  address: string;
}

function rowKey(ctx: AppContext, send: PretendedSend): string {
  const mac = createHmac('sha256', derivedKey('pretended-send', childSecretOf(ctx.config.jwt)))
    .update(`${send.kind}\0${send.address}`)
    .digest('hex');
  return `${PRETENDED_SEND_PREFIX}${send.kind}:${mac}`;
}

/** The interval a known address gets on this channel. */
export function intervalOf(ctx: AppContext, channel: Channel): number {
  return channel === 'email' ? ctx.config.smtp.maxFrequencySeconds : ctx.config.sms.maxFrequencySeconds;
}

/**
 * 429, the same as a known address gets, when a send was pretended within the interval; changes nothing.
 * For a caller that must refuse before spending anything (a global send permit) on the send.
 */
export async function assertNoRecentPretendedSend(ctx: AppContext, q: Queryable, send: PretendedSend, now = Date.now()): Promise<void> {
  assertSendInterval(send.channel, await lastPretendedSend(q, rowKey(ctx, send)), intervalOf(ctx, send.channel), now);
}

/**
 * Remembers a pretended send now, or throws the 429 a known address gets when one was pretended within
 * the interval (nothing is written then). Of concurrent requests for one address, one records and the
 * others are refused, as concurrent sends to one user are. Called when the pretended send would have
 * ended (after the timing wait), as a real send's *_sent_at is set after it, so a repeat is told the same
 * seconds; on the pool, never while the request holds another connection (delivery/sending-tx.ts). A
 * sign-up records it inside its transaction instead (users/signup.ts), where a real confirmation's time is
 * set, so that it commits or rolls back with the audit entry written beside it.
 */
export async function rememberPretendedSend(ctx: AppContext, q: Queryable, send: PretendedSend): Promise<void> {
  const key = rowKey(ctx, send);
  const minSeconds = intervalOf(ctx, send.channel);
  // No interval: a known address is never refused either, so there is nothing to remember.
  if (minSeconds <= 0) return;
  // A refusal whose row has aged past the interval by the time it is read again is simply tried again.
  for (;;) {
    const now = Date.now();
    if (await recordPretendedSend(q, key, new Date(now), new Date(now - minSeconds * 1000))) return;
    assertSendInterval(send.channel, await lastPretendedSend(q, key), minSeconds);
  }
}
