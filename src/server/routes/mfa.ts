// The /factors routes (docs/mfa.md): thin handlers over the flows in src/server/mfa/.
import { enrollFactor } from '../mfa/enroll.js';
import { challengeFactor } from '../mfa/challenge.js';
import { verifyFactor } from '../mfa/verify.js';
import { unenrollFactor } from '../mfa/unenroll.js';
import { bodySchema } from '../http/validate.js';
import type { Authenticated } from '../auth/principal.js';
import type { GuardedHandler } from '../http/types.js';

// Fields are read by the flows with the original's checks; the schemas only pin their JSON types.
export const enrollBody = bodySchema({ factor_type: 'unknown', friendly_name: 'string', issuer: 'string', phone: 'string' });
export const challengeBody = bodySchema({ channel: 'unknown', webauthn: 'unknown' });
/** DELETE routes take no fields; the schema still refuses a body that is not an object. */
export const noFields = bodySchema({});
export const verifyFactorBody = bodySchema({ challenge_id: 'string', code: 'string', webauthn: 'unknown' });

export const postFactors: GuardedHandler<Authenticated> = async (req, ctx, principal) => ({
  body: await enrollFactor(req, ctx, principal),
});
export const postChallenge: GuardedHandler<Authenticated> = async (req, ctx, principal) => ({
  body: await challengeFactor(req, ctx, principal),
});
export const postVerify: GuardedHandler<Authenticated> = async (req, ctx, principal) => ({ body: await verifyFactor(req, ctx, principal) });
export const deleteFactor: GuardedHandler<Authenticated> = async (req, ctx, principal) => ({
  body: await unenrollFactor(req, ctx, principal),
});
