// How deeply a JSON body may nest. Every later use of a body's value serialises it recursively (a jsonb
// parameter, the claims of an access token, the answer), so a metadata object nested a few ten thousand
// levels deep, well within the 1 MiB body limit, overflowed the stack there: a 500. The original's Go
// decoder refuses a body nested deeper than 10,000 levels as bad JSON before reading it; so does ours.

/** Go's encoding/json maxNestingDepth: the body object itself is the first level. */
export const MAX_JSON_DEPTH = 10_000;

/**
 * Each level takes at least two bytes (its opening and closing character), so a shorter body cannot be too
 * deep, and the usual small body is not walked at all.
 */
export const mayBeTooDeep = (bodyBytes: number) => bodyBytes > 2 * MAX_JSON_DEPTH;

/**
 * The opening character of the first object or array nested deeper than MAX_JSON_DEPTH in a parsed value (the
 * value itself is level 1), or null. A loop, not recursion: the values it refuses are deeper than the stack.
 */
export function tooDeep(value: unknown): '{' | '[' | null {
  const pending: Array<[unknown, number]> = [[value, 1]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [here, depth] = next;
    if (here === null || typeof here !== 'object') continue;
    if (depth > MAX_JSON_DEPTH) return Array.isArray(here) ? '[' : '{';
    for (const inner of Object.values(here)) pending.push([inner, depth + 1]);
  }
  return null;
}
