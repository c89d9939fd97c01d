// The SAML assertions already accepted at the ACS (sql/00019_saml_assertion_uses.sql, docs/sso-saml.md#replay).
import type { Queryable } from './pool.js';

/**
 * Records the provider's assertion as used until `usableUntil`; false when it was used already. Inside the
 * sign-in's transaction: a concurrent use of the same assertion waits on the key, then finds it taken
 * (or, if the first sign-in rolled back, takes it).
 */
export async function claimSamlAssertion(q: Queryable, providerId: string, assertionId: string, usableUntil: Date): Promise<boolean> {
  const { rowCount } = await q.query(
    `insert into saml_assertion_uses (sso_provider_id, assertion_id, usable_until) values ($1, $2, $3)
     on conflict (sso_provider_id, assertion_id) do nothing`,
    [providerId, assertionId, usableUntil],
  );
  return rowCount === 1;
}
