// Adoption of the original's flow_state (docs/adopting-gotrue.md#what-adoption-does): OAuth and PKCE
// sign-ins in flight at the switch finish here, as the row's id is the `state` in both services. The
// columns 00001 has are copied with the other tables; what a sign-in needs at its callback (the invite
// token, the linking target, email_optional, and the code verifier the original kept in
// oauth_client_states for a provider that requires PKCE, X) only has a column from 00002 on, so it waits
// in gotrue_flow_state_context until the pending migrations ran, in the same transaction.
import { ident, tablesIn, type Tx } from './adopt-catalog.js';
import { picker, runCount } from './adopt-data.js';

const CONTEXT = 'gotrue_flow_state_context';

/**
 * The rows, without flows of deleted users or half-specified challenges, and without linking flows whose
 * user is gone (such a flow could only end as someone else's sign-in).
 */
export async function copyFlowState(sql: Tx, schema: string): Promise<number> {
  const col = await picker(sql, schema, 'gotrue_flow_state');
  const challenge = `nullif(o.code_challenge, '')`;
  const linkingTarget = col('linking_target_id');
  const verifier =
    col('oauth_client_state_id') !== 'null' && (await tablesIn(sql, schema)).includes('gotrue_oauth_client_states')
      ? `(select s.code_verifier from gotrue_oauth_client_states s
          where s.id = o.oauth_client_state_id and s.provider_type = o.provider_type)`
      : 'null::text';
  const kept = `(o.user_id is null or exists (select 1 from users u where u.id = o.user_id))
       and (${linkingTarget} is null or exists (select 1 from users u where u.id = ${linkingTarget}))`;
  await sql.unsafe(
    `create table ${ident(CONTEXT)} as
     select o.id, nullif(${col('invite_token')}, '')::text as invite_token, ${linkingTarget}::uuid as linking_target_id,
            coalesce(${col('email_optional')}, false) as email_optional, ${verifier} as provider_code_verifier
     from gotrue_flow_state o where ${kept}`,
  );
  return runCount(
    sql,
    `insert into flow_state (id, user_id, auth_code, code_challenge_method, code_challenge, provider_type, provider_access_token,
                             provider_refresh_token, authentication_method, auth_code_issued_at, referrer, created_at, updated_at)
     select o.id, o.user_id, nullif(o.auth_code, ''), case when ${challenge} is null then null else o.code_challenge_method::text end,
            ${challenge}, coalesce(o.provider_type, ''), o.provider_access_token, o.provider_refresh_token,
            coalesce(${col('authentication_method')}, ''), ${col('auth_code_issued_at')}, ${col('referrer')},
            coalesce(o.created_at, now()), coalesce(o.updated_at, o.created_at, now())
     from gotrue_flow_state o where ${kept}`,
  );
}

/**
 * Once the pending migrations made the columns: the waiting context into flow_state, then away with it and
 * with the original's oauth_client_states, whose verifiers it holds (nothing else reads them).
 */
export async function finishFlowStateAdoption(tx: Tx, schema: string, note: (line: string) => void): Promise<void> {
  const tables = await tablesIn(tx, schema);
  if (tables.includes('gotrue_oauth_client_states')) await tx.unsafe('drop table gotrue_oauth_client_states');
  if (!tables.includes(CONTEXT)) return;
  const count = await runCount(
    tx,
    `update flow_state f
     set invite_token = c.invite_token, linking_target_id = c.linking_target_id, email_optional = c.email_optional,
         provider_code_verifier = c.provider_code_verifier
     from ${ident(CONTEXT)} c
     where c.id = f.id
       and (c.invite_token is not null or c.linking_target_id is not null or c.email_optional or c.provider_code_verifier is not null)`,
  );
  await tx.unsafe(`drop table ${ident(CONTEXT)}`);
  note(`flow states given their sign-in context (invite, linking, PKCE verifier at the provider): ${count} rows`);
}
