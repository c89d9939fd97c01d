// The wall clock to the microsecond, for times the service sets that the original takes from Go's
// time.Now() (nanoseconds, of which PostgreSQL keeps the microseconds) and then shows whole: a ban's end
// (docs/users-and-audit.md#bans). Date.now() has milliseconds only, which the user JSON would show as a
// fraction of three digits where the original's has six.
import { performance } from 'node:perf_hooks';

/**
 * Microseconds since 1970: Date.now()'s millisecond, and the microseconds within it from the
 * high-resolution clock (performance.now() runs at microsecond resolution or finer), so the time is the
 * wall clock's to the millisecond whatever the two clocks drifted apart since start.
 */
export function nowMicroseconds(): number {
  const withinMillisecond = Math.floor(((performance.timeOrigin + performance.now()) * 1000) % 1000);
  return Date.now() * 1000 + withinMillisecond;
}
