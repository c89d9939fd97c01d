// flow_state: PKCE (and OAuth) flows between the request that starts them and the code exchange.
import type { Queryable } from './pool.js';

export interface FlowStateRow {
  id: string;
  user_id: string | null;
  auth_code: string | null;
  code_challenge_method: 's256' | 'plain' | null;
  code_challenge: string | null;
  provider_type: string;
  provider_access_token: string | null;
  provider_refresh_token: string | null;
  authentication_method: string;
  auth_code_issued_at: Date | null;
  referrer: string | null;
  created_at: Date;
  updated_at: Date;
}

export async function insertFlowState(
  q: Queryable,
  f: {
    userId: string | null;
    codeChallenge: string;
    method: 's256' | 'plain';
    authenticationMethod: string;
    /** as the original names the flow's origin (the PKCE grant audits it): by default its method, e.g. `recovery` */
    providerType?: string;
    referrer?: string;
  },
): Promise<FlowStateRow> {
  const { rows } = await q.query<FlowStateRow>(
    `insert into flow_state (user_id, auth_code, code_challenge_method, code_challenge, provider_type, authentication_method, referrer)
     values ($1, gen_random_uuid()::text, $2, $3, $4, $5, $6) returning *`,
    [f.userId, f.method, f.codeChallenge, f.providerType ?? f.authenticationMethod, f.authenticationMethod, f.referrer ?? null],
  );
  return rows[0];
}

/** The newest flow of this user and method (GET /verify of a pkce_ link finds its flow this way). */
export async function findLatestFlowState(q: Queryable, userId: string, authenticationMethod: string): Promise<FlowStateRow | null> {
  const { rows } = await q.query<FlowStateRow>(
    `select * from flow_state where user_id = $1 and authentication_method = $2 order by created_at desc limit 1`,
    [userId, authenticationMethod],
  );
  return rows[0] ?? null;
}

export async function markAuthCodeIssued(q: Queryable, id: string): Promise<void> {
  await q.query('update flow_state set auth_code_issued_at = now(), updated_at = now() where id = $1', [id]);
}

/** Locks the flow of an auth code for the exchange. */
export async function lockFlowStateByAuthCode(q: Queryable, authCode: string): Promise<FlowStateRow | null> {
  const { rows } = await q.query<FlowStateRow>('select * from flow_state where auth_code = $1 for update', [authCode]);
  return rows[0] ?? null;
}

export async function deleteFlowState(q: Queryable, id: string): Promise<void> {
  await q.query('delete from flow_state where id = $1', [id]);
}

/** The OAuth columns of a flow (sql/00002_oauth_flow_state.sql). */
export interface OAuthFlowStateRow extends FlowStateRow {
  invite_token: string | null;
  linking_target_id: string | null;
  email_optional: boolean;
  provider_code_verifier: string | null;
  oauth1_token_secret: string | null;
  callback_at: Date | null;
}

/** GET /authorize: the flow whose id becomes `state`. No auth code until the callback finishes a PKCE flow. */
export async function insertOAuthFlowState(
  q: Queryable,
  f: {
    provider: string;
    referrer: string;
    codeChallenge: string | null;
    method: 's256' | 'plain' | null;
    inviteToken: string | null;
    linkingTargetId: string | null;
    emailOptional: boolean;
    providerCodeVerifier: string | null;
  },
): Promise<OAuthFlowStateRow> {
  const { rows } = await q.query<OAuthFlowStateRow>(
    `insert into flow_state (code_challenge_method, code_challenge, provider_type, authentication_method, referrer,
                             invite_token, linking_target_id, email_optional, provider_code_verifier)
     values ($1, $2, $3, 'oauth', $4, $5, $6, $7, $8) returning *`,
    [f.method, f.codeChallenge, f.provider, f.referrer, f.inviteToken, f.linkingTargetId, f.emailOptional, f.providerCodeVerifier],
  );
  return rows[0];
}

/** Twitter: the request token's secret, kept until the callback signs the access-token request with it. */
export async function setOAuth1Secret(q: Queryable, id: string, secret: string): Promise<void> {
  await q.query('update flow_state set oauth1_token_secret = $2, updated_at = now() where id = $1', [id, secret]);
}

/** The OAuth flow a callback's `state` names, read without claiming it (the callback may still fail). */
export async function findOAuthFlowState(q: Queryable, id: string): Promise<OAuthFlowStateRow | null> {
  const { rows } = await q.query<OAuthFlowStateRow>("select * from flow_state where id = $1 and authentication_method = 'oauth'", [id]);
  return rows[0] ?? null;
}

/**
 * The callback's claim of its flow, inside the transaction that finishes it: of two callbacks with one
 * state only the first gets the row (the second's update waits for the first to commit, then finds
 * callback_at set or the row gone). A failed callback rolls its claim back, so the state still works.
 */
export async function claimOAuthFlowState(q: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await q.query(
    `update flow_state set callback_at = now(), updated_at = now() where id = $1 and callback_at is null`,
    [id],
  );
  return rowCount === 1;
}

/** A refused callback (an unverified address) commits its user and mail, but not its claim of the flow. */
export async function releaseOAuthFlowState(q: Queryable, id: string): Promise<void> {
  await q.query('update flow_state set callback_at = null, updated_at = now() where id = $1', [id]);
}

/** A PKCE flow finished at the callback: the user, the provider's tokens and the code the client exchanges. */
export async function finishOAuthFlowState(
  q: Queryable,
  id: string,
  f: { userId: string; providerAccessToken: string; providerRefreshToken: string },
): Promise<string> {
  const { rows } = await q.query<{ auth_code: string }>(
    `update flow_state set user_id = $2, provider_access_token = $3, provider_refresh_token = $4,
            auth_code = gen_random_uuid()::text, auth_code_issued_at = now(), updated_at = now()
     where id = $1 returning auth_code`,
    [id, f.userId, f.providerAccessToken || null, f.providerRefreshToken || null],
  );
  return rows[0].auth_code;
}

/** POST /sso with a code_challenge: the flow the ACS finishes with a user and an auth code (docs/sso-saml.md#pkce). */
export async function insertSsoFlowState(
  q: Queryable,
  f: { codeChallenge: string; method: 's256' | 'plain'; referrer: string },
): Promise<string> {
  const { rows } = await q.query<{ id: string }>(
    `insert into flow_state (code_challenge_method, code_challenge, provider_type, authentication_method, referrer)
     values ($1, $2, 'sso/saml', 'sso/saml', $3) returning id`,
    [f.method, f.codeChallenge, f.referrer],
  );
  return rows[0].id;
}
