// RFC 3339 timestamps read as the original reads them (Go's time.Parse with RFC3339), as milliseconds since
// the epoch: a Web3 sign-in message's times (docs/web3.md#the-message) and SMS_TEST_OTP_VALID_UNTIL. Go's
// reading is laxer than RFC 3339 in three ways a wallet's message may rely on, taken here too: a one-digit
// hour, fractional seconds of any length (digits past the nanosecond ignored), and zone offsets up to
// 24 hours and 60 minutes.
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{1,2}):(\d{2}):(\d{2})(?:[.,](\d+))?(?:Z|([+-])(\d{2}):(\d{2}))$/;

/** The instant Go calls the zero time (0001-01-01T00:00:00Z): the original treats it as "not given". */
export const ZERO_TIME = utc(1, 1, 1, 0, 0, 0);

/** Milliseconds since the epoch, or null when the text is not an RFC 3339 timestamp. */
export function parseTimestamp(text: string): number | null {
  const m = RFC3339.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  const fraction = m[7] ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0; // milliseconds: finer digits are dropped
  const offset = m[8] ? (m[8] === '-' ? -1 : 1) * (Number(m[9]) * 60 + Number(m[10])) : 0;
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || second > 59) return null;
  if (m[8] && (Number(m[9]) > 24 || Number(m[10]) > 60)) return null;
  return utc(year, month, day, hour, minute, second) + fraction - offset * 60_000;
}

function daysIn(year: number, month: number): number {
  return new Date(utc(year, month + 1, 1, 0, 0, 0) - 86_400_000).getUTCDate();
}

/** Date.UTC without its reading of years 0–99 as 1900–1999. */
function utc(year: number, month: number, day: number, hour: number, minute: number, second: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, 0);
  return d.getTime();
}
