// saml_relay_states (sql/00010_saml_sso.sql): one row per SP-initiated sign-in, from POST /sso to the ACS.
import type { Queryable } from './pool.js';

export interface RelayStateRow {
  id: string;
  sso_provider_id: string;
  request_id: string;
  redirect_to: string | null;
  flow_state_id: string | null;
  created_at: Date;
}

export async function insertRelayState(
  q: Queryable,
  r: { ssoProviderId: string; requestId: string; redirectTo: string; flowStateId: string | null },
): Promise<string> {
  const { rows } = await q.query<{ id: string }>(
    `insert into saml_relay_states (sso_provider_id, request_id, redirect_to, flow_state_id) values ($1, $2, $3, $4) returning id`,
    [r.ssoProviderId, r.requestId, r.redirectTo, r.flowStateId],
  );
  return rows[0].id;
}

/**
 * The relay state's insert failed because its provider is gone: deleted after POST /sso found it (the
 * foreign key's check waited for the deletion to commit). Other failures, even of other constraints, are not.
 */
export function relayStateProviderGone(err: unknown): boolean {
  const e = err as { code?: unknown; constraint?: unknown } | null;
  return e?.code === '23503' && e.constraint === 'saml_relay_states_sso_provider_id_fkey';
}

/**
 * The ACS takes its relay state in one statement: deleted and returned, so of two posts with the same
 * RelayState only one finds it (a replayed response is refused as not found).
 */
export async function takeRelayState(q: Queryable, id: string): Promise<RelayStateRow | null> {
  const { rows } = await q.query<RelayStateRow>(
    `delete from saml_relay_states where id = $1
     returning id, sso_provider_id, request_id, redirect_to, flow_state_id, created_at`,
    [id],
  );
  return rows[0] ?? null;
}
