// app_metadata's `provider` and `providers`, derived from the user's identities as the original derives them
// after every link, unlink, sign-in of an existing identity and confirmed address change: each provider
// once, oldest identity first, `provider` the first of them (left as it was when the user has none). So the
// list always names the identities the user really has, whatever an earlier write left in it.
import { findIdentitiesByUser } from '../../db/identities.js';
import type { Queryable } from '../../db/pool.js';

/** `meta` with the providers of `identities`, given oldest first. */
export function withProviders(meta: Record<string, unknown>, identities: ReadonlyArray<{ provider: string }>): Record<string, unknown> {
  const providers = [...new Set(identities.map((i) => i.provider))];
  return { ...meta, providers, ...(providers.length > 0 ? { provider: providers[0] } : {}) };
}

/** withProviders of the user's identities as they stand in the database. */
export async function withProvidersOfIdentities(
  q: Queryable,
  userId: string,
  meta: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  return withProviders(meta, await findIdentitiesByUser(q, userId));
}
