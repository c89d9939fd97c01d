// Go's strings.TrimSpace, which the original applies to several inputs (a role as it is stored, the lines
// of a Web3 sign-in message): it takes Unicode White_Space off both ends, which is not String#trim's set,
// since it keeps U+FEFF and takes U+0085.
/** Go's unicode.IsSpace: Unicode White_Space. */
export const GO_SPACE = /[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/;

/** Walked from both ends, not one regular expression: a long run of inner spaces must not cost quadratic time. */
export function trimSpace(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && GO_SPACE.test(text[start])) start++;
  while (end > start && GO_SPACE.test(text[end - 1])) end--;
  return text.slice(start, end);
}
