// The refresh grant's statements (src/server/grants/refresh-token.ts). The service's own functions are
// used when dist/ has them; a build without the refresh grant gets these copies of the same SQL, kept
// only so the limit can be measured before the grant is merged. Keep them in step with src/db.
import * as refreshTokens from '../../dist/db/refresh-tokens.js';
import * as sessions from '../../dist/db/sessions.js';
import * as audit from '../../dist/db/audit-log.js';

const copies = {
  async findPresentedToken(q, tokenHash) {
    const { rows } = await q.query({ name: 'refresh_tokens_presented', values: [tokenHash],
      text: `select rt.id, rt.session_id, rt.user_id, u.banned_until
             from refresh_tokens rt join users u on u.id = rt.user_id where rt.token_hash = $1` });
    return rows[0] ?? null;
  },
  async lockSessionUser(q, sessionId) {
    const { rows } = await q.query({ name: 'sessions_lock_user', values: [sessionId],
      text: 'select u.* from sessions s join users u on u.id = s.user_id where s.id = $1 for update of s' });
    return rows[0] ?? null;
  },
  async readTokenState(q, tokenId, sessionId) {
    const { rows } = await q.query({ name: 'refresh_tokens_state', values: [tokenId, sessionId],
      text: `select rt.revoked, rt.updated_at as revoked_at, a.id as active_id, a.parent_id as active_parent_id, a.token_hash as active_hash
             from refresh_tokens rt
             left join lateral (select id, parent_id, token_hash from refresh_tokens
                                where session_id = $2 and not revoked order by id desc limit 1) a on true
             where rt.id = $1` });
    return rows[0] ?? null;
  },
  async rotateRefreshToken(q, parentId, childHash) {
    const { rows } = await q.query({ name: 'refresh_tokens_rotate', values: [parentId, childHash],
      text: `with parent as (update refresh_tokens set revoked = true, updated_at = now() where id = $1 returning user_id, session_id),
                  touched as (update sessions set refreshed_at = now(), updated_at = now() where id = (select session_id from parent))
             insert into refresh_tokens (token_hash, user_id, session_id, parent_id)
             select $2, user_id, session_id, $1 from parent returning *` });
    return rows[0];
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
    findPresentedToken: refreshTokens.findPresentedToken, readTokenState: refreshTokens.readTokenState,
    rotateRefreshToken: refreshTokens.rotateRefreshToken, lockSessionUser: sessions.lockSessionUser, auditRotation,
  };
}
