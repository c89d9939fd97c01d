// GET /.well-known/jwks.json (docs/api.md#get-well-knownjwksjson): the public keys that verify access tokens. Tokens are
// signed with the symmetric JWT_SECRET today, and a symmetric key is never published, so the set is
// empty; clients such as auth-js then verify through GET /user.
import type { Handler } from '../http/types.js';

const BODY = JSON.stringify({ keys: [] });

export const jwks: Handler = () => ({
  body: BODY,
  headers: { 'Content-Type': 'application/json', 'Cache-Control': 'public, max-age=600' },
});
