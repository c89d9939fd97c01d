// GET /.well-known/jwks.json (docs/api.md#get-well-knownjwksjson): the public halves of the JWT_KEYS that
// verify access tokens. Symmetric keys (JWT_SECRET, `oct` keys) are never published, so with none
// configured the set is empty and clients such as auth-js verify through GET /user.
import type { Handler } from '../http/types.js';
import { goJsonText } from '../http/go-json-text.js';

const HEADERS = { 'Content-Type': 'application/json', 'Cache-Control': 'public, max-age=600' };
/** The body, serialised once per JWT service (the keys are fixed for the process's life). */
const bodies = new WeakMap<object, string>();

export const jwks: Handler = (_req, ctx) => {
  let body = bodies.get(ctx.jwt);
  if (body === undefined) {
    body = goJsonText({ keys: ctx.jwt.publicKeys });
    bodies.set(ctx.jwt, body);
  }
  return { body, headers: HEADERS };
};
