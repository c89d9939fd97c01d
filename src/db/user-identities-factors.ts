// A user's identities and factors read together, for a user already in hand (a send hook's payload,
// docs/hooks.md#send-email): the same two json arrays GET /user's statement reads beside the user row, in
// one round trip instead of two.
import { identitiesJsonSql, identityRows, type IdentityJsonRow, type IdentityRow } from './identities.js';
import { factorRows, factorsJsonSql, type FactorJsonRow, type FactorRow } from './mfa-factors.js';
import type { Queryable } from './pool.js';

export async function findIdentitiesAndFactors(q: Queryable, userId: string): Promise<{ identities: IdentityRow[]; factors: FactorRow[] }> {
  const { rows } = await q.query<{ identities: IdentityJsonRow[]; factors: FactorJsonRow[] }>(
    `select ${identitiesJsonSql('$1::uuid')} as identities, ${factorsJsonSql('$1::uuid')} as factors`,
    [userId],
  );
  return { identities: identityRows(rows[0].identities), factors: factorRows(rows[0].factors) };
}
