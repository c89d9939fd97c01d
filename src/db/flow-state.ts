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
    providerType?: string;
    referrer?: string;
  },
): Promise<FlowStateRow> {
  const { rows } = await q.query<FlowStateRow>(
    `insert into flow_state (user_id, auth_code, code_challenge_method, code_challenge, provider_type, authentication_method, referrer)
     values ($1, gen_random_uuid()::text, $2, $3, $4, $5, $6) returning *`,
    [f.userId, f.method, f.codeChallenge, f.providerType ?? 'email', f.authenticationMethod, f.referrer ?? null],
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
