// A JSON body's member names matched to a route's fields as the original's decoder matches them
// (docs/api.md#conventions-for-every-endpoint): exactly, else ignoring case, so `{"Email": …}` is the email field. Go's
// encoding/json decodes every request body this way, and clients written against the original may send
// such names; a member the original would have read must not be silently dropped here.

/**
 * A member name folded for comparison: lower case, with ſ read as s (the one non-ASCII letter besides the
 * Kelvin sign, which toLowerCase already turns into k, that Unicode case folding equates with an ASCII one).
 */
export function foldedName(name: string): string {
  return name.toLowerCase().replaceAll('ſ', 's');
}

/** A route's field names, indexed for matching. */
export interface FieldNames {
  readonly exact: ReadonlySet<string>;
  readonly folded: ReadonlyMap<string, string>;
}

export function fieldNames(names: Iterable<string>): FieldNames {
  const exact = new Set(names);
  return { exact, folded: new Map([...exact].map((name) => [foldedName(name), name])) };
}

/** The field a member fills, or undefined when it fills none. */
function fieldOf(member: string, fields: FieldNames): string | undefined {
  return fields.exact.has(member) ? member : fields.folded.get(foldedName(member));
}

const NONE: ReadonlySet<string> = new Set();

/**
 * The body with every member that fills a field under another spelling renamed to the field (the body
 * itself when none is: the common case costs one lookup per member). As in the original, members are read in
 * order and a later member of a field replaces an earlier one. A later null replaces a value only in the
 * fields named in `nulled`: Go's decoder sets a pointer, map, slice or interface field to nil for null, and
 * leaves a string, bool or struct field as it was (go-field-types.ts says which is which for each of the
 * original's request types). Members that fill no field are kept as they are.
 */
export function underFieldNames(body: Record<string, unknown>, fields: FieldNames, nulled = NONE): Record<string, unknown> {
  const members = Object.keys(body);
  if (members.every((member) => (fieldOf(member, fields) ?? member) === member)) return body;
  const named = new Map<string, unknown>();
  for (const member of members) {
    const name = fieldOf(member, fields) ?? member;
    const value = body[member];
    if (value === null && named.get(name) != null && !nulled.has(name)) continue;
    named.set(name, value);
  }
  return Object.fromEntries(named); // defines each entry as its own property, `__proto__` included
}
