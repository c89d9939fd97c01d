// A number too large for a float64 (1e400) is refused, as the original's decoder refuses it: JSON.parse reads
// it as Infinity, which would be stored as null, a value the client never sent. Underflow (1e-400) reads as 0
// in both. Only a body whose text hints at such a number is walked, so the usual body costs one regex test.

const HINT = /\d(?:[eE]\+?0*[1-9]\d{2}|\d{308})/;
// A string is consumed whole, so digits inside one are never taken for a number.
const TOKENS = /"(?:[^"\\]|\\.)*"|(-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/g;

/** Go's words for the first number of the body that overflows a float64; null when none does. */
export function numberOutOfRange(text: string, value: unknown): string | null {
  if (!HINT.test(text) || !holdsInfinity(value)) return null;
  for (const [, number] of text.matchAll(TOKENS)) {
    if (number !== undefined && !Number.isFinite(Number(number))) {
      return `json: cannot unmarshal number ${number} into Go value of type float64`;
    }
  }
  return 'json: cannot unmarshal number into Go value of type float64';
}

function holdsInfinity(value: unknown): boolean {
  if (typeof value === 'number') return !Number.isFinite(value);
  if (value === null || typeof value !== 'object') return false;
  return Object.values(value).some(holdsInfinity);
}
