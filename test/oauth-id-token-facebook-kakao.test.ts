// POST /token?grant_type=id_token for the two providers whose SDKs hand out signed JWTs without being in the
// OIDC family: Facebook Limited Login (issuer https://www.facebook.com, keys at
// /.well-known/oauth/openid/jwks/) and Kakao (issuer https://kauth.kakao.com, keys at /.well-known/jwks.json).
// A local server publishes each provider's JWKS at its real path; tokens are signed with jose by the
// matching private key, and EXTERNAL_<PROVIDER>_URL moves the issuer to the local server.
import t from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type JWK } from 'jose';
import { startTestService } from './helpers/server.js';
import { providerEnv } from './helpers/oauth.js';

interface Issuer {
  url: string;
  jwksHits: () => number;
  sign(claims: Record<string, unknown>, options?: { audience?: string; expiresIn?: string; issuer?: string }): Promise<string>;
  close(): Promise<void>;
}

/** An issuer whose JWKS is served at `jwksPath`, signing RS256 tokens with the matching private key. */
async function startIssuer(jwksPath: string, kid: string): Promise<Issuer> {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  let hits = 0;
  const server = http.createServer((req, res) => {
    if (req.url !== jwksPath) return res.writeHead(404).end();
    hits++;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    jwksHits: () => hits,
    sign: (claims, options = {}) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid })
        .setIssuer(options.issuer ?? url)
        .setAudience(options.audience ?? 'fb-app-id')
        .setIssuedAt()
        .setExpirationTime(options.expiresIn ?? '5m')
        .sign(privateKey),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const facebook = await startIssuer('/.well-known/oauth/openid/jwks/', 'fb-key-1');
const kakao = await startIssuer('/.well-known/jwks.json', 'kakao-key-1');
const api = await startTestService({
  ...providerEnv('facebook', {
    clientId: 'fb-app-id',
    secret: 'fb-secret',
    redirectUri: 'https://auth.example.test/callback',
    url: facebook.url,
  }),
  ...providerEnv('kakao', {
    clientId: 'kakao-app-key,kakao-native-key',
    secret: 'kakao-secret',
    redirectUri: 'https://auth.example.test/callback',
    url: kakao.url,
  }),
});
t.teardown(async () => {
  await api.stop();
  await facebook.close();
  await kakao.close();
});

const grant = (body: Record<string, unknown>) => api.request('POST', '/token?grant_type=id_token', { body });

t.test('facebook limited login: a token signed by the key at the JWKS path signs in; its address counts as verified', async (t) => {
  const idToken = await facebook.sign({
    sub: '10229384756',
    email: 'limited@facebook.example',
    name: 'Limited Login',
    picture: 'https://platform-lookaside.fbsbx.example/10229384756',
  });
  const res = await grant({ provider: 'facebook', id_token: idToken });
  t.equal(res.status, 200, 'signed in');
  t.equal(res.body.user.email, 'limited@facebook.example');
  t.ok(res.body.user.email_confirmed_at, 'Facebook only hands out confirmed addresses');
  t.match(res.body.user.identities, [
    {
      provider: 'facebook',
      id: '10229384756',
      identity_data: {
        iss: facebook.url,
        sub: '10229384756',
        name: 'Limited Login',
        email: 'limited@facebook.example',
        email_verified: true,
      },
    },
  ]);
  t.equal(facebook.jwksHits(), 1);

  const byIssuer = await grant({ client_id: 'fb-app-id', issuer: facebook.url, id_token: await facebook.sign({ sub: '10229384756' }) });
  t.equal(byIssuer.status, 200, 'found by its issuer, without the provider name');
  t.equal(byIssuer.body.user.id, res.body.user.id);
});

t.test("facebook: the token's nonce is not checked, as the original never checks it for Limited Login", async (t) => {
  const withNonce = await facebook.sign({ sub: '55501', email: 'nonce@facebook.example', nonce: 'sdk-nonce' });
  t.equal((await grant({ provider: 'facebook', id_token: withNonce })).status, 200, 'a nonce in the token only');
  const other = await facebook.sign({ sub: '55501', nonce: 'sdk-nonce' });
  t.equal((await grant({ provider: 'facebook', id_token: other, nonce: 'app-nonce' })).status, 200, 'or another one than sent');
  const kakaoToken = await kakao.sign({ sub: '55502', nonce: 'sdk-nonce' }, { audience: 'kakao-app-key' });
  t.same(
    (await grant({ provider: 'kakao', id_token: kakaoToken })).body,
    { error: 'invalid request', error_description: 'Passed nonce and nonce in id_token should either both exist or not.' },
    'other providers still check it',
  );
});

t.test('facebook: wrong audience, wrong issuer, expired, or signed by another key: refused', async (t) => {
  const wrongAud = await grant({ provider: 'facebook', id_token: await facebook.sign({ sub: '1' }, { audience: 'another-app' }) });
  t.same(wrongAud.body, { error: 'invalid request', error_description: 'Unacceptable audience in id_token: [another-app]' });
  const wrongIss = await grant({
    provider: 'facebook',
    id_token: await facebook.sign({ sub: '1' }, { issuer: 'https://www.facebook.com' }),
  });
  t.same(wrongIss.body, { error: 'invalid request', error_description: 'Bad ID token' }, 'the configured base is the issuer');
  const expired = await grant({ provider: 'facebook', id_token: await facebook.sign({ sub: '1' }, { expiresIn: '-1m' }) });
  t.same(expired.body, { error: 'invalid request', error_description: 'Bad ID token' });
  const forged = await grant({ provider: 'facebook', id_token: await kakao.sign({ sub: '1' }, { issuer: facebook.url }) });
  t.equal(forged.status, 400, 'a key the issuer does not publish');
  t.equal((await api.db.query(`select count(*)::int as n from identities where provider = 'facebook' and provider_id = '1'`)).rows[0].n, 0);
});

t.test('kakao: an id_token for any of the client ids signs in with the nickname and picture', async (t) => {
  const idToken = await kakao.sign(
    { sub: '3141592653', email: 'kakao@kakao.example', nickname: '라이언', picture: 'http://k.kakaocdn.example/ryan.jpg' },
    { audience: 'kakao-native-key' },
  );
  const res = await grant({ provider: 'kakao', id_token: idToken });
  t.equal(res.status, 200, 'signed in');
  t.equal(res.body.user.email, 'kakao@kakao.example');
  t.ok(res.body.user.email_confirmed_at);
  t.match(res.body.user.identities, [
    {
      provider: 'kakao',
      id: '3141592653',
      identity_data: { iss: kakao.url, name: '라이언', preferred_username: '라이언', picture: 'http://k.kakaocdn.example/ryan.jpg' },
    },
  ]);
  t.equal(res.body.user.user_metadata.preferred_username, '라이언');
  const fbAud = await grant({ provider: 'kakao', id_token: await kakao.sign({ sub: '3141592653' }) });
  t.equal(fbAud.status, 400, "facebook's app id is no kakao audience");
});
