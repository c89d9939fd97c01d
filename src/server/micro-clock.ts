// The wall clock to the microsecond, for every time the service sets from its own clock and stores where
// the API shows it, as the original takes them from Go's time.Now() (nanoseconds, of which PostgreSQL keeps
// the microseconds): a confirmation, an invitation, a *_sent_at, a ban's end
// (docs/users-and-audit.md#user-json). Date.now() and new Date() have milliseconds only, which the user
// JSON would show as a fraction of three digits where the original's has six. Times PostgreSQL sets with
// now() are whole already; comparisons with the clock (expiry, intervals) need no more than milliseconds.
import { performance } from 'node:perf_hooks';
import { DbTimestamp } from '../db/timestamps.js';

/**
 * Microseconds since 1970: Date.now()'s millisecond, and the microseconds within it from the
 * high-resolution clock (performance.now() runs at microsecond resolution or finer), so the time is the
 * wall clock's to the millisecond whatever the two clocks drifted apart since start.
 */
export function nowMicroseconds(): number {
  const withinMillisecond = Math.floor(((performance.timeOrigin + performance.now()) * 1000) % 1000);
  return Date.now() * 1000 + withinMillisecond;
}

/**
 * Now as a DbTimestamp: a Date for the code that compares with it, that the user writes (updateUser,
 * insertUser through timestampParam) and JSON (toJSON) carry to the microsecond.
 */
export const nowTimestamp = (): DbTimestamp => DbTimestamp.fromMicroseconds(nowMicroseconds());
