// Go's time.ParseDuration syntax ("300ms", "1h30m", "-1.5h"), which the original service's settings
// and admin ban_duration accept. Returns milliseconds, or null when the text is not a duration.
import { parseGoDurationNs } from './go-duration.js';

export function parseGoDuration(text: string): number | null {
  const parsed = parseGoDurationNs(text);
  return 'ns' in parsed ? Number(parsed.ns) / 1e6 : null;
}

/** A duration setting: a bare number of seconds (`900`) or a Go duration (`15m`). Seconds, or null. */
export function parseSeconds(text: string): number | null {
  // Bare seconds in Go's float forms too (5., .5, 3e2, -5, +400): the original reads MFA_CHALLENGE_EXPIRY_DURATION
  // with ParseFloat, which takes a sign and refuses a number past a float64's range (1e400) rather than read it as infinite.
  if (/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(text)) {
    const seconds = Number(text);
    return Number.isFinite(seconds) ? seconds : null;
  }
  const ms = parseGoDuration(text);
  return ms === null ? null : ms / 1000;
}
