// How the OAuth 2.1 server writes what it answers, byte for byte as the original writes it
// (internal/api/oauthserver/authorize.go buildSuccessRedirectURL / buildErrorRedirectURL, handlers.go
// OAuthUserInfo): the redirects back to an app are Go's url.Parse of the redirect URI written back by
// URL.String with the query of url.Values.Encode (sorted, url.QueryEscape: `~` kept, `*` escaped, a space
// as `+`; a pair of the URI's own holding `;` or a bad escape dropped); userinfo's user_metadata is a Go
// map, its members sorted by key at every depth.
import t from 'tap';
import { createHash } from 'node:crypto';
import { startTestService } from './helpers/server.js';
import {
  APP_REDIRECT,
  authorizationIdOf,
  authorize,
  basic,
  oauthServerEnv,
  registerClient,
  signedInUser,
  tokenRequest,
} from './helpers/oauth-server.js';

const api = await startTestService(oauthServerEnv());
t.teardown(() => api.stop());

const VERIFIER = 'dBjftJeZ4CVP-mJ92K9ZJMZk3Q_dmZtN8o9xG5z7jW8Lx4R2Qb1sT';
const PKCE = { code_challenge: createHash('sha256').update(VERIFIER).digest('base64url'), code_challenge_method: 'S256' };

const authorizeUrl = (params: Record<string, string>) => `${api.url}/oauth/authorize?${new URLSearchParams(params)}`;

t.test(
  'an error redirect: the redirect URI as Go writes it back, its own query kept as url.Values keeps it, all escaped by QueryEscape',
  async (t) => {
    // description "unsupported scope: x~y*z!'()", state "s~1* 2"
    const tail = 'error=invalid_request&error_description=unsupported+scope%3A+x~y%2Az%21%27%28%29&state=s~1%2A+2';
    const rows: Array<[string, string]> = [
      [APP_REDIRECT, `${APP_REDIRECT}?${tail}`],
      // its own pairs sorted in with ours (a name's values in their order), `+` and %20 a space written `+`,
      // %7e written `~`; a pair holding `;` or a malformed escape dropped; its state replaced by the request's
      [
        'http://localhost:4000/callback?z=1&a=%7e&b=x;y&c=%zz&state=old&d+e=f%20g&a=2',
        `http://localhost:4000/callback?a=~&a=2&d+e=f+g&${tail}&z=1`,
      ],
      // the host's case and an empty path kept (no `/` added)
      ['https://App.Example.com', `https://App.Example.com?${tail}`],
      // a non-ASCII host escaped (not punycode), the port and `..` kept, the path's non-ASCII and `|` escaped
      ['https://bücher.example:443/a/../rück|ruf', `https://b%C3%BCcher.example:443/a/../r%C3%BCck%7Cruf?${tail}`],
      // an empty fragment's `#` dropped; a custom scheme lower-cased
      ['MyApp://Callback/done#', `myapp://Callback/done?${tail}`],
    ];
    const client = await registerClient(api, { redirect_uris: rows.map(([uri]) => uri) });
    for (const [redirectUri, expected] of rows) {
      const res = await authorize(
        authorizeUrl({ client_id: client.client_id, redirect_uri: redirectUri, scope: "email x~y*z!'()", state: 's~1* 2', ...PKCE }),
      );
      t.strictSame([res.status, res.location], [302, expected], redirectUri);
    }
  },
);

t.test(
  'the consent API’s redirect_url: code and state set over the URI’s own query (approve), the error kept beside its code (deny)',
  async (t) => {
    const redirectUri = 'http://localhost:4000/callback?code=stale&next=%2Fhome';
    const client = await registerClient(api, { redirect_uris: [redirectUri] });
    const decide = async (action: 'approve' | 'deny') => {
      const user = await signedInUser(api);
      const started = await authorize(
        authorizeUrl({ client_id: client.client_id, redirect_uri: redirectUri, scope: 'email', state: 'st~*', ...PKCE }),
      );
      const id = authorizationIdOf(started.location);
      await api.request('GET', `/oauth/authorizations/${id}`, { token: user.session.access_token });
      const res = await api.request('POST', `/oauth/authorizations/${id}/consent`, { token: user.session.access_token, body: { action } });
      return res.body.redirect_url as string;
    };
    const approved = await decide('approve');
    const code = /[?&]code=([^&]*)/.exec(approved)?.[1] ?? '';
    t.not(code, 'stale');
    t.equal(approved, `http://localhost:4000/callback?code=${code}&next=%2Fhome&state=st~%2A`);
    t.equal(
      (
        await tokenRequest(
          api,
          { grant_type: 'authorization_code', code, code_verifier: VERIFIER },
          basic(client.client_id, client.client_secret!),
        )
      ).status,
      200,
      'the code in the redirect is the one issued',
    );
    t.equal(
      await decide('deny'),
      'http://localhost:4000/callback?code=stale&error=access_denied&error_description=User+denied+the+request&next=%2Fhome&state=st~%2A',
    );
  },
);

t.test('userinfo: user_metadata’s members sorted by key in byte order at every depth, HTML-escaped, as Go writes a map', async (t) => {
  const client = await registerClient(api);
  const user = await signedInUser(api);
  await api.db.query(
    `update users set raw_user_meta_data = '{"z": "last", "é": "x", "<k>": "a&b", "b": 1, "aa": {"z": [{"y": 1, "x": 2}], "9": false, "A": null, "10": true}}'
       where id = $1`,
    [user.user.id],
  );
  const started = await authorize(authorizeUrl({ client_id: client.client_id, redirect_uri: APP_REDIRECT, scope: 'profile', ...PKCE }));
  const id = authorizationIdOf(started.location);
  await api.request('GET', `/oauth/authorizations/${id}`, { token: user.session.access_token });
  const approval = await api.request('POST', `/oauth/authorizations/${id}/consent`, {
    token: user.session.access_token,
    body: { action: 'approve' },
  });
  const code = new URL(approval.body.redirect_url).searchParams.get('code')!;
  const tokens = await tokenRequest(
    api,
    { grant_type: 'authorization_code', code, code_verifier: VERIFIER },
    basic(client.client_id, client.client_secret!),
  );
  const res = await api.request('GET', '/oauth/userinfo', { token: tokens.body.access_token });
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^application\/json/);
  const metadata = '{"\\u003ck\\u003e":"a\\u0026b","aa":{"10":true,"9":false,"A":null,"z":[{"x":2,"y":1}]},"b":1,"z":"last","é":"x"}';
  t.equal(
    res.text,
    `{"name":${JSON.stringify(user.user.email)},"sub":"${user.user.id}","updated_at":${res.body.updated_at},"user_metadata":${metadata}}`,
  );
});
