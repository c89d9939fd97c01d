// GET /user: the authenticated user with identities (REFERENCE §2.8), read with the user and session.
// The token's audience is checked with the rest of the bearer checks (authenticate.ts).
import { authenticateWithIdentities } from '../auth/bearer.js';
import { userJson } from '../users/user-json.js';
import type { Handler } from '../http/types.js';

export const getUser: Handler = async (req, ctx) => {
  const { user, identities } = await authenticateWithIdentities(req, ctx);
  return { body: userJson(user, identities) };
};
