// The body of both verify requests, {challenge_id, credential}: checked in the original's order, then the
// challenge it names is looked up and refused when it has expired. A sign-in takes the challenge out of the
// table at once, whatever happens next, so it answers one attempt only. A registration reads it and spends
// it with the passkey's insert, in one transaction: one refused after its attestation passed (the limit
// reached, its session ended, a database fault) leaves it, as it leaves everything else.
import { apiError } from '../errors.js';
import { consumeChallenge, findChallenge, type ChallengeRow, type ChallengeType } from '../../db/webauthn-challenges.js';
import { canonicalUuid } from '../uuid-text.js';
import { bodySchema, type BodyOf } from '../http/validate.js';
import type { Queryable } from '../../db/pool.js';

/** The options requests and deletions read no field (the captcha guard reads gotrue_meta_security itself). */
export const noPasskeyFields = bodySchema({});

const FIELDS = { challenge_id: 'string', credential: 'unknown' } as const;
export const challengeAnswerBody = bodySchema(FIELDS);
export type ChallengeAnswerBody = BodyOf<typeof FIELDS>;

interface ChallengeAnswer {
  challenge: ChallengeRow;
  credential: unknown;
}

/** Consumes the challenge the body names: of two requests answering it at once, one gets it. */
export async function takeChallenge(
  q: Queryable,
  body: ChallengeAnswerBody,
  type: ChallengeType,
  userId: string | null,
): Promise<ChallengeAnswer> {
  const challenge = await consumeChallenge(q, answeredChallengeId(body), type, userId);
  return { challenge: unexpired(challenge), credential: body.credential };
}

/** The challenge the body names, left in the table for spendChallenge; an expired one is taken out, as by takeChallenge. */
export async function readChallenge(
  q: Queryable,
  body: ChallengeAnswerBody,
  type: ChallengeType,
  userId: string | null,
): Promise<ChallengeAnswer> {
  const id = answeredChallengeId(body);
  const challenge = await findChallenge(q, id, type, userId);
  if (challenge && isExpired(challenge)) await consumeChallenge(q, id, type, userId);
  return { challenge: unexpired(challenge), credential: body.credential };
}

/**
 * Consumes a challenge readChallenge found. Inside the transaction that acts on it, the delete's row lock
 * keeps it single-use: a concurrent answer waits for that transaction, and finds it gone (not found) if
 * it committed, or still there if it rolled back.
 */
export async function spendChallenge(q: Queryable, read: ChallengeRow): Promise<void> {
  unexpired(await consumeChallenge(q, read.id, read.challenge_type, read.user_id));
}

function answeredChallengeId(body: ChallengeAnswerBody): string {
  if (!body.challenge_id) throw apiError('challenge_id_required');
  if (body.credential === undefined || body.credential === null) throw apiError('credential_required');
  // In any spelling the original's UUID reading takes ({…}, urn:uuid:…, 32 bare digits), as for passkey ids.
  const challengeId = canonicalUuid(body.challenge_id);
  if (!challengeId) throw apiError('challenge_id_invalid');
  return challengeId;
}

function isExpired(challenge: ChallengeRow): boolean {
  return challenge.expires_at.getTime() <= Date.now();
}

function unexpired(challenge: ChallengeRow | null): ChallengeRow {
  if (!challenge) throw apiError('webauthn_challenge_not_found');
  if (isExpired(challenge)) throw apiError('webauthn_challenge_expired');
  return challenge;
}
