// The word Go's encoding/json uses for a JSON value's kind in its type errors ("json: cannot unmarshal
// array into Go value of type …"), which the original answers verbatim: a body that is not an object,
// a bearer token's claim of the wrong type, a mistyped grant parameter.

/** array, object, string, number or bool: the kind of a value JSON.parse returned, in Go's words. */
export function goJsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'object') return 'object';
  if (typeof value === 'boolean') return 'bool';
  return typeof value; // 'string' or 'number'
}
