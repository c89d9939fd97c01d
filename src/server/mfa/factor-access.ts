// Loading the factor a /factors/{factor_id} request names, with the original's refusals: an anonymous
// user may not use MFA; the id must be a UUID of one of the caller's own factors.
import { apiError } from '../errors.js';
import { findOwnedFactor, type FactorRow } from '../../db/mfa-factors.js';
import { FACTOR_TYPES, type FactorType } from './factor-types/index.js';
import type { Authenticated } from '../auth/principal.js';
import type { Queryable } from '../../db/pool.js';
import type { ApiRequest } from '../http/types.js';
import { CANONICAL_UUID, canonicalUuid } from '../uuid-text.js';

export const isUuid = (s: unknown): s is string => typeof s === 'string' && CANONICAL_UUID.test(s);

/** The {factor_id} of the path in canonical form (any spelling the original's UUID reading takes), else its 404. */
export function factorIdParam(req: ApiRequest): string {
  const id = canonicalUuid(req.params.factor_id);
  if (!id) throw apiError('mfa_factor_id');
  return id;
}

/**
 * 403 for anonymous users, as the original's requireNotAnonymous on every /factors route and on passkey
 * registration: a token issued while the user was anonymous is refused even once the user no longer is.
 */
export function requireNotAnonymous(principal: Authenticated): void {
  if (principal.claims.is_anonymous === true || principal.user.is_anonymous) throw apiError('anonymous_not_allowed');
}

/** The caller's factor named by the path (locked when `lock`), or the original's 404s. */
export async function ownedFactor(q: Queryable, req: ApiRequest, userId: string, lock = false): Promise<FactorRow> {
  const factor = await findOwnedFactor(q, userId, factorIdParam(req), lock);
  if (!factor) throw apiError('mfa_factor_not_found');
  return factor;
}

/** The module of a factor's type; a stored type without one (webauthn before its module lands) answers as disabled. */
export function typeOf(factor: Pick<FactorRow, 'factor_type'>, step: 'enroll' | 'verify'): FactorType {
  const type = FACTOR_TYPES.get(factor.factor_type);
  if (!type) throw apiError(factor.factor_type === 'webauthn' ? `mfa_webauthn_${step}_not_enabled` : 'mfa_factor_type');
  return type;
}
