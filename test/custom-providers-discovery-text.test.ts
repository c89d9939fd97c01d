// A discovery document's text reaches the row's cached_discovery (jsonb), which PostgreSQL refuses to hold
// a NUL (\u0000) or a lone UTF-16 surrogate in. Neither may turn a create or an update into a 500: a lone
// surrogate becomes U+FFFD, as the original's Go decoder reads it; a NUL in a member the row keeps refuses
// the document with the other discovery failures' 400; one in a member the row drops changes nothing.
import t from 'tap';
import { startDiscoveryIdp } from './helpers/discovery-idp.js';

// Each path prefix names a document: its members (written as raw JSON text, so escapes reach the service as sent).
const EXTRA: Record<string, string> = {
  surrogate: '"scopes_supported":["openid","\\ud800"],"id_token_signing_alg_values_supported":["RS256","\\udc00"]',
  'nul-kept': '"scopes_supported":["openid","a\\u0000b"]',
  'nul-dropped': '"service_documentation":"a\\u0000b"',
};
const { base, api, token, create } = await startDiscoveryIdp(t, (name, issuer) =>
  name in EXTRA
    ? `{"issuer":"${issuer}","authorization_endpoint":"${issuer}/auth","token_endpoint":"${issuer}/token",` +
      `"jwks_uri":"${issuer}/jwks",${EXTRA[name]}}`
    : undefined,
);

t.test('a lone surrogate in a kept member is stored as U+FFFD', async (t) => {
  const res = await create('surrogate');
  t.equal(res.status, 201, res.text);
  t.strictSame(res.body.discovery_document?.scopes_supported, ['openid', '\ufffd']);
  const { rows } = await api.db.query(`select cached_discovery from custom_oauth_providers where identifier = 'custom:surrogate'`);
  t.strictSame(rows[0].cached_discovery.id_token_signing_alg_values_supported, ['RS256', '\ufffd']);
  // an update that fetches the document again stores it the same way
  const again = await api.request('PUT', '/admin/custom-providers/custom:surrogate', { token, body: { discovery_url: '' } });
  t.equal(again.status, 200, again.text);
});

t.test('a NUL in a kept member refuses the document with a 400, and nothing is stored', async (t) => {
  const res = await create('nul-kept');
  t.equal(res.status, 400, res.text);
  t.equal(res.body.error_code, 'validation_failed');
  t.equal(
    res.body.msg,
    `OIDC discovery from "${base}/nul-kept/.well-known/openid-configuration" failed: the document holds a NUL character`,
  );
  const { rows } = await api.db.query(`select 1 from custom_oauth_providers where identifier = 'custom:nul-kept'`);
  t.equal(rows.length, 0);
});

t.test('a NUL in a member the row does not keep changes nothing', async (t) => {
  const res = await create('nul-dropped');
  t.equal(res.status, 201, res.text);
});
