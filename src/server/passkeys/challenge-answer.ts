// The body of both verify requests, {challenge_id, credential}: checked in the original's order, then the
// challenge is consumed — taken out of the table whatever happens next, so it answers one attempt only —
// and refused when it has expired.
import { apiError } from '../errors.js';
import { consumeChallenge, type ChallengeRow, type ChallengeType } from '../../db/webauthn-challenges.js';
import { canonicalUuid } from '../uuid-text.js';
import { bodySchema, type BodyOf } from '../http/validate.js';
import type { Queryable } from '../../db/pool.js';

/** The options requests and deletions read no field (the captcha guard reads gotrue_meta_security itself). */
export const noPasskeyFields = bodySchema({});

const FIELDS = { challenge_id: 'string', credential: 'unknown' } as const;
export const challengeAnswerBody = bodySchema(FIELDS);
export type ChallengeAnswerBody = BodyOf<typeof FIELDS>;

export async function takeChallenge(
  q: Queryable,
  body: ChallengeAnswerBody,
  type: ChallengeType,
  userId: string | null,
): Promise<{ challenge: ChallengeRow; credential: unknown }> {
  if (!body.challenge_id) throw apiError('challenge_id_required');
  if (body.credential === undefined || body.credential === null) throw apiError('credential_required');
  // In any spelling the original's UUID reading takes ({…}, urn:uuid:…, 32 bare digits), as for passkey ids.
  const challengeId = canonicalUuid(body.challenge_id);
  if (!challengeId) throw apiError('challenge_id_invalid');
  const challenge = await consumeChallenge(q, challengeId, type, userId);
  if (!challenge) throw apiError('webauthn_challenge_not_found');
  if (challenge.expires_at.getTime() <= Date.now()) throw apiError('webauthn_challenge_expired');
  return { challenge, credential: body.credential };
}
