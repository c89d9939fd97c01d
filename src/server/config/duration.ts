// Go's time.ParseDuration syntax ("300ms", "1h30m", "-1.5h"), which the original service's settings
// and admin ban_duration accept. Returns milliseconds, or null when the text is not a duration.
const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, μs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const WHOLE = /^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$/;
const PART = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g;

/** Go's durations are int64 nanoseconds: about 292 years, past which time.ParseDuration refuses the text. */
const LONGEST_GO_DURATION_MS = 9_223_372_036_854.775;

export function parseGoDuration(text: string): number | null {
  // Go takes a bare zero, signed or not, without a unit.
  if (/^[-+]?0$/.test(text)) return 0;
  if (!WHOLE.test(text)) return null;
  let total = 0;
  for (const [, amount, unit] of text.matchAll(PART)) total += Number(amount) * UNIT_MS[unit];
  if (total > LONGEST_GO_DURATION_MS) return null;
  return text.startsWith('-') ? -total : total;
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
