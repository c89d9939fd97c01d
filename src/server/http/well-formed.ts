// Lone UTF-16 surrogates in a JSON body (the escape "\ud800" without its pair) become U+FFFD, in values
// and object keys alike, as the original's Go JSON decoder does: PostgreSQL's jsonb refuses them, so
// passed on they would fail the insert as a 500 (test/surrogates.test.ts).

// Node 20 has String.prototype.toWellFormed (ES2024); the project's lib setting (ES2022) does not type it.
declare global {
  interface String {
    toWellFormed(): string;
  }
}

// Raw UTF-8 cannot carry a surrogate (Buffer decoding already turns such bytes into U+FFFD), so only the
// escape can: \uD800-\uDFFF. A body without one needs no walk. Query strings need none either:
// URLSearchParams decodes a percent-encoded surrogate (%ED%A0%80) to U+FFFD.
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

export const mayHoldLoneSurrogates = (rawLatin1: string): boolean => SURROGATE_ESCAPE.test(rawLatin1);

/** The value with every string and key well-formed; objects and arrays are rebuilt only as needed. */
export function wellFormed(value: unknown): unknown {
  if (typeof value === 'string') return value.toWellFormed();
  if (Array.isArray(value)) return value.map(wellFormed);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) out[key.toWellFormed()] = wellFormed(inner);
  return out;
}
