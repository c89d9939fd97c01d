// The refresh grant's statements on its usual path (src/server/grants/refresh-token.ts: an active token
// presented once): find the token with its session's state and its user; then one autocommit statement
// that locks the session, rotates (audit rows included, built by the grant's own rotationAudit and
// ownerOf) and returns the user, AMR and identities the token response needs (lockAndRotate in
// src/db/refresh-rotation.ts). All of them the service's own, from dist/, so the limit follows the grant.
// Loaded on demand: a build without the grant has no dist/server/grants/refresh-token.js, skips
// token-refresh (bench/lib/refresh.mjs), and must still load the other workloads of sql-workloads.mjs.
// Keep the order in step with the grant.
export async function refreshStatements() {
  const [tokens, rotation, grant] = await Promise.all([import('../../dist/db/refresh-tokens.js'),
    import('../../dist/db/refresh-rotation.js'), import('../../dist/server/grants/refresh-token.js')]);
  return {
    findPresentedToken: tokens.findPresentedToken,
    /** lockAndRotate for the token `found` as the grant calls it: null unless it rotated */
    lockAndRotate: (q, found, childHash, client) => rotation.lockAndRotate(q, { parentId: found.id, sessionId: found.session_id,
      childHash, client, audit: grant.rotationAudit(grant.ownerOf(found)), now: new Date() }),
  };
}
