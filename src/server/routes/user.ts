// GET /user: the authenticated user with identities (docs/api.md#get-user), read with the user and session.
// The guard 'user+identities' (routes.ts) read them, with the token's checks (auth/bearer.ts).
import type { AuthenticatedWithIdentities } from '../auth/bearer.js';
import { userJson } from '../users/user-json.js';
import type { GuardedHandler } from '../http/types.js';

export const getUser: GuardedHandler<AuthenticatedWithIdentities> = (_req, _ctx, { user, identities, factors }) => ({
  body: userJson(user, identities, factors),
});
