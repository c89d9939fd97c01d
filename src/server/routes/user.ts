// GET /user: the authenticated user with identities (REFERENCE §2.8), read with the user and session.
import { ApiError } from '../errors.js';
import { authenticateWithIdentities, requestAudience } from '../authenticate.js';
import { userJson } from '../users/user-json.js';
import type { Handler } from '../types.js';

export const getUser: Handler = async (req, ctx) => {
  const { claims, user, identities } = await authenticateWithIdentities(req, ctx);
  if (requestAudience(req, ctx, claims) !== claims.aud) {
    throw new ApiError(400, 'validation_failed', "Token audience doesn't match request audience");
  }
  return { body: userJson(user, identities) };
};
