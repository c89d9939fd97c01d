// A compact token's segments decoded as the original's parser decodes them: golang-jwt v5 reads each with
// Go's unpadded base64url, which refuses any byte outside the alphabet and a lone final character. Node's and
// jose's decoders skip such bytes and drop a lone last character instead, so a token with junk in a segment
// (padding after its signature, say) verified here and was malformed there
// (docs/tokens-and-sessions.md#verification).

const ALPHABET = /^[A-Za-z0-9_-]*$/;

/** Go's "illegal base64 data at input byte N" for a segment it cannot decode, or null. N counts UTF-8 bytes. */
export function base64SegmentProblem(segment: string): string | null {
  if (ALPHABET.test(segment)) {
    // Four characters make three bytes; one left over holds no whole byte, and Go points at it.
    return segment.length % 4 === 1 ? `illegal base64 data at input byte ${segment.length - 1}` : null;
  }
  // Go skips carriage returns and line feeds; a header value cannot carry them, so they are not special here.
  const first = segment.search(/[^A-Za-z0-9_-]/);
  return `illegal base64 data at input byte ${Buffer.byteLength(segment.slice(0, first), 'utf8')}`;
}

const SEGMENT_NAMES = ['header', 'claim', 'signature'] as const;

/** Why the parser cannot decode a token's header (0), claims (1) or signature (2) segment, in its words, or null. */
export function segmentProblem(segments: readonly string[], index: 0 | 1 | 2): string | null {
  const problem = base64SegmentProblem(segments[index]);
  return problem ? `token is malformed: could not base64 decode ${SEGMENT_NAMES[index]}: ${problem}` : null;
}
