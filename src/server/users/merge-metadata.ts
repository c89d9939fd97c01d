// How user_metadata and app_metadata take a change, wherever one is sent (PUT /user, the admin API,
// generate_link's data): the original merges into a Go map, one level deep.

/** The metadata with `updates` merged in: each key replaced whole, a key set to null removed. */
export function mergeMetadata(current: Record<string, unknown>, updates: Record<string, unknown>): Record<string, unknown> {
  const merged = { ...current };
  for (const [key, value] of Object.entries(updates)) {
    if (value === null) delete merged[key];
    // Defined, not assigned: `__proto__` is a key like any other to the original (a Go map), and assigning
    // it would set the object's prototype instead of storing it.
    else Object.defineProperty(merged, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return merged;
}
