// The refresh grant's statements on its usual path (src/server/grants/refresh-token.ts: an active token
// presented once): find the token with its session's state; lock the session; rotate; audit. The
// service's own functions are used when dist/ has them; a build without the refresh grant gets these
// copies of the same SQL (feat/sessions, 11:21 UTC), kept only so the limit can be measured before the
// grant is merged. Keep the order in step with the grant.
import * as refreshTokens from '../../dist/db/refresh-tokens.js';
import * as sessions from '../../dist/db/sessions.js';
import * as audit from '../../dist/db/audit-log.js';

const copies = {
  async findPresentedToken(q, tokenHash) {
    const { rows } = await q.query({ name: 'refresh_tokens_presented', values: [tokenHash],
      text: `select rt.id, rt.session_id, rt.user_id, u.banned_until, rt.revoked, extract(epoch from clock_timestamp() - rt.updated_at)::float8 as revoked_for,
                    a.id as active_id, a.parent_id as active_parent_id, a.token_hash as active_hash
             from refresh_tokens rt join users u on u.id = rt.user_id
             left join lateral (select id, parent_id, token_hash from refresh_tokens
                                where session_id = rt.session_id and not revoked order by id desc limit 1) a on true
             where rt.token_hash = $1` });
    return rows[0] ?? null;
  },
  async lockSessionUser(q, sessionId) {
    const { rows } = await q.query({ name: 'sessions_lock_user', values: [sessionId],
      text: 'select u.* from sessions s join users u on u.id = s.user_id where s.id = $1 for update of s' });
    return rows[0] ?? null;
  },
  async rotateRefreshToken(q, parentId, childHash, client) {
    const { rows } = await q.query({ name: 'refresh_tokens_rotate', values: [parentId, childHash, client.userAgent, client.ip],
      text: `with parent as (update refresh_tokens set revoked = true, updated_at = now()
                             where id = $1 and not revoked returning user_id, session_id),
                  touched as (update sessions set refreshed_at = now(), updated_at = now(), user_agent = $3, ip = $4
                              where id = (select session_id from parent))
             insert into refresh_tokens (token_hash, user_id, session_id, parent_id)
             select $2, user_id, session_id, $1 from parent returning *` });
    return rows[0] ?? null;
  },
};

/** Which statements the limit drives: 'service' (from dist/db) or 'copy' (this file). */
export const refreshStatementsSource = typeof refreshTokens.rotateRefreshToken === 'function' ? 'service' : 'copy';

/** The grant's two audit rows: one statement where the build has writeAudits, else two. */
async function auditRotation(q, actor) {
  if (typeof audit.writeAudits === 'function') return audit.writeAudits(q, actor, ['token_revoked', 'token_refreshed']);
  await audit.writeAudit(q, actor, 'token_revoked');
  await audit.writeAudit(q, actor, 'token_refreshed');
}

export async function refreshStatements() {
  if (refreshStatementsSource === 'copy') return { ...copies, auditRotation };
  return {
    findPresentedToken: refreshTokens.findPresentedToken,
    rotateRefreshToken: refreshTokens.rotateRefreshToken, lockSessionUser: sessions.lockSessionUser, auditRotation,
  };
}
