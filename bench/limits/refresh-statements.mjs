// The refresh grant's statements on its usual path (src/server/grants/refresh-token.ts: an active token
// presented once): find the token with its session's state; lock the session; rotate, audit included (one
// statement, its audit rows built by the grant's own rotationAudit). All of them the service's own, from
// dist/, so the limit follows the grant. Loaded on demand: a build without the grant has no
// dist/server/grants/refresh-token.js, skips token-refresh (bench/lib/refresh.mjs), and must still load
// the other workloads of sql-workloads.mjs. Keep the order in step with the grant.
export async function refreshStatements() {
  const [tokens, sessions, grant] = await Promise.all([import('../../dist/db/refresh-tokens.js'),
    import('../../dist/db/sessions.js'), import('../../dist/server/grants/refresh-token.js')]);
  return {
    findPresentedToken: tokens.findPresentedToken,
    lockSessionUser: sessions.lockSessionUser,
    /** rotateRefreshToken with the audit rows the grant writes for `user` */
    rotateAudited: (q, parentId, childHash, client, user) => tokens.rotateRefreshToken(q, parentId, childHash, client, grant.rotationAudit(user)),
  };
}
