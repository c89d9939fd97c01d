// The transaction of a request that may send mail or SMS. The global send counters (RATE_LIMIT_EMAIL_SENT,
// RATE_LIMIT_SMS_SENT: one rate_limits row each) are never updated inside it: that row's lock would be held
// across the SMTP exchange and serialise every send of every thread and instance behind the slowest one,
// and taking them through the pool while holding the transaction's client is the wait on a second
// connection that wedged the pool (issue 11). So a send spends a permit taken before the transaction
// began; one that reaches a send without a permit rolls back, takes it through the pool while holding no
// connection, and runs again. The counters keep their old meaning: one per mail or SMS attempted.
// Each attempt's transaction holds one of the thread's sending slots (sending-slots.ts) while it is open,
// so sends waiting on a stalled relay never take half the pool; the slot is waited for, and
// given back, while no connection is held.
import type pg from 'pg';
import { tx, type Queryable } from '../../db/pool.js';
import { countsAgainstLimit, takeSendPermit, type Channel } from '../limits/sends.js';
import type { AppContext } from '../context.js';
import type { SendTimingKey } from './send-timing.js';

interface Permits {
  held: Record<Channel, number>;
  /** sends that went out (or were attempted) */
  spent: Record<Channel, number>;
  /** sends only pretended, to answer as if they went out: permits all the same, but no send's timing */
  pretended: Record<Channel, number>;
}

/** Permits of the transaction running on a client; only sendingTx sets them, send-token.ts spends them. */
const permitsOf = new WeakMap<pg.PoolClient, Permits>();

class PermitNeeded extends Error {
  constructor(
    readonly channel: Channel,
    readonly total: number,
  ) {
    super(`${total} ${channel} send permit(s) needed`);
  }
}

/**
 * A mail's recipient that MAILER_EMAIL_VALIDATION_* must still check over the network (DNS, an outside
 * service): the transaction rolls back and the check runs while no connection is held, as a permit is taken.
 */
class RecipientCheckNeeded extends Error {
  constructor(readonly addresses: string[]) {
    super(`${addresses.length} recipient(s) must be checked before the transaction`);
  }
}

/**
 * The largest need, a secure email change, takes four: its two permits, then a check of each of its two
 * addresses; one more to spare.
 */
const MAX_ATTEMPTS = 5;

/**
 * With `timing`, a transaction that committed without sending anything answers only once it has taken as
 * long as this kind of request takes when it sends (send-timing.ts), so the answer's timing does not tell
 * a known address from an unknown one.
 */
export async function sendingTx<T>(
  ctx: AppContext,
  signal: AbortSignal | undefined,
  fn: (c: pg.PoolClient) => Promise<T>,
  timing?: SendTimingKey,
): Promise<T> {
  const held: Record<Channel, number> = { email: 0, sms: 0 };
  for (let attempt = 1; ; attempt++) {
    try {
      const permits: Permits = { held: { ...held }, spent: { email: 0, sms: 0 }, pretended: { email: 0, sms: 0 } };
      // A slot is held only while the transaction is open (sending-slots.ts), taken before its connection.
      const releaseSlot = await ctx.sendingSlots.acquire(signal);
      let result: T;
      try {
        result = await tx(
          ctx.db,
          async (c) => {
            permitsOf.set(c, permits);
            try {
              return await fn(c);
            } finally {
              permitsOf.delete(c);
            }
          },
          signal,
        );
      } finally {
        releaseSlot();
      }
      if (timing && permits.spent.email + permits.spent.sms > 0) ctx.sendTiming.sent(timing);
      else if (timing) await ctx.sendTiming.nothingSent(timing, signal);
      return result;
    } catch (err) {
      if (!(err instanceof PermitNeeded || err instanceof RecipientCheckNeeded) || attempt === MAX_ATTEMPTS) throw err;
      // No connection is held here: the transaction above has ended.
      if (err instanceof RecipientCheckNeeded) {
        await Promise.all(err.addresses.map((address) => ctx.mailer.checkAddress(address)));
        continue;
      }
      while (held[err.channel] < err.total) {
        await takeSendPermit(ctx, ctx.db, err.channel);
        held[err.channel]++;
      }
    }
  }
}

/**
 * Makes sure `count` more sends on `channel` are covered before the first of them goes out, so a request
 * sending two mails never sends the first and then starts over for the second.
 */
export function requirePermits(ctx: AppContext, q: Queryable, channel: Channel, count: number): void {
  if (!countsAgainstLimit(ctx, channel)) return;
  const permits = permitsInside(q);
  const total = permits.spent[channel] + permits.pretended[channel] + count;
  if (total > permits.held[channel]) throw new PermitNeeded(channel, total);
}

/** Spends one permit for a send about to go out on the transaction's client `q`. */
export function spendPermit(ctx: AppContext, q: Queryable, channel: Channel): void {
  spendOn(ctx, q, channel, 'spent');
}

/**
 * Spends one permit for a send the request only pretends to make (a sign-up of a confirmed address, a
 * resend with nothing to send), so that a spent RATE_LIMIT_EMAIL_SENT / RATE_LIMIT_SMS_SENT answers 429
 * whether the address has an account or not. It is no send for the timing: the request still waits out a
 * send's usual duration.
 */
export function spendPermitOnPretendedSend(ctx: AppContext, q: Queryable, channel: Channel): void {
  spendOn(ctx, q, channel, 'pretended');
}

function spendOn(ctx: AppContext, q: Queryable, channel: Channel, tally: 'spent' | 'pretended'): void {
  requirePermits(ctx, q, channel, 1);
  const permits = permitsOf.get(q as pg.PoolClient);
  if (permits) permits[tally][channel]++;
}

/**
 * Makes sure mails to `addresses` will not wait on the network for their address check inside the
 * transaction on `q`: the first time, the transaction starts over once they are checked. A request sending
 * two mails names both before the first goes, so it never sends one and then starts over for the other.
 */
export function requireCheckedRecipients(ctx: AppContext, q: Queryable, addresses: string[]): void {
  const unchecked = addresses.filter((address) => ctx.mailer.needsAddressCheck(address));
  if (unchecked.length === 0) return;
  permitsInside(q);
  throw new RecipientCheckNeeded(unchecked);
}

/** The permits of the sendingTx running on `q`; a send anywhere else is a programming error. */
function permitsInside(q: Queryable): Permits {
  const permits = permitsOf.get(q as pg.PoolClient);
  if (!permits) throw new TypeError('mail and SMS are sent only inside sendingTx()');
  return permits;
}
