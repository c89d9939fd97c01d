// Duration settings: a bare number of seconds, or Go's time.ParseDuration syntax ("300ms", "1h30m", "-1.5h"),
// which the original service's settings accept (read exactly as Go reads it by go-duration.ts).
import { parseGoDurationNs } from './go-duration.js';

/** A duration setting: a bare number of seconds (`900`) or a Go duration (`15m`). Seconds, or null. */
export function parseSeconds(text: string): number | null {
  // Bare seconds in Go's float forms too (5., .5, 3e2, -5, +400): the original reads MFA_CHALLENGE_EXPIRY_DURATION
  // with ParseFloat, which takes a sign and refuses a number past a float64's range (1e400) rather than read it as infinite.
  if (/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(text)) {
    const seconds = Number(text);
    return Number.isFinite(seconds) ? seconds : null;
  }
  const parsed = parseGoDurationNs(text);
  return 'ns' in parsed ? Number(parsed.ns) / 1e9 : null;
}
