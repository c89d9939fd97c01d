// An exact reading of Go's time.ParseDuration: the original service parses its duration settings and the admin
// ban_duration with it, so the same text must give the same whole number of nanoseconds (fractions below 1 ns
// are dropped, the int64 range is the limit) and the same error text, which the original puts in its messages.
const NS_PER_UNIT: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n,
  μs: 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};
const TWO_POW_63 = 1n << 63n;

export type GoDuration = { ns: bigint } | { error: string };

export function parseGoDurationNs(text: string): GoDuration {
  const invalid = { error: `time: invalid duration ${goQuote(text)}` };
  let rest = text;
  let negative = false;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    negative = rest.startsWith('-');
    rest = rest.slice(1);
  }
  if (rest === '0') return { ns: 0n };
  if (rest === '') return invalid;
  let total = 0n;
  while (rest !== '') {
    const part = /^(\d*)(?:\.(\d*))?/.exec(rest)!;
    const [matched, whole, fraction] = part;
    if (whole === '' && !fraction) return invalid;
    rest = rest.slice(matched.length);
    // An integer part past 2^63 is refused; fraction digits past that precision are read but ignored, as in Go.
    const value = BigInt(whole || '0');
    if (value > TWO_POW_63) return invalid;
    const unitText = /^[^\d.]*/.exec(rest)![0];
    if (unitText === '') return { error: `time: missing unit in duration ${goQuote(text)}` };
    rest = rest.slice(unitText.length);
    const unit = NS_PER_UNIT[unitText];
    if (unit === undefined) return { error: `time: unknown unit ${goQuote(unitText)} in duration ${goQuote(text)}` };
    if (value > TWO_POW_63 / unit) return invalid;
    const ns = value * unit + fractionNs(fraction ?? '', unit);
    if (ns > TWO_POW_63) return invalid;
    total += ns;
    if (total > TWO_POW_63) return invalid;
  }
  if (negative) return { ns: -total };
  return total > TWO_POW_63 - 1n ? invalid : { ns: total };
}

// Go computes a fraction in float64 (f * (unit / 10^digits)) and truncates it to whole nanoseconds.
function fractionNs(digits: string, unit: bigint): bigint {
  let f = 0n;
  let scale = 1;
  for (const digit of digits) {
    if (f > (TWO_POW_63 - 1n) / 10n) break;
    const next = f * 10n + BigInt(digit);
    if (next > TWO_POW_63) break;
    f = next;
    scale *= 10;
  }
  if (f === 0n) return 0n;
  return BigInt(Math.trunc(Number(f) * (Number(unit) / scale)));
}

// The time package's own quoting: quotes and backslashes escaped, control and non-ASCII characters as \x bytes.
function goQuote(text: string): string {
  let quoted = '"';
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (code < 0x20 || code >= 0x80) {
      for (const byte of Buffer.from(char, 'utf8')) quoted += `\\x${byte.toString(16).padStart(2, '0')}`;
    } else quoted += char === '"' || char === '\\' ? `\\${char}` : char;
  }
  return `${quoted}"`;
}
