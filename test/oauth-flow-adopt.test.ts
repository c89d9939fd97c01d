// OAuth sign-ins in flight when the original is swapped for this service (docs/adopting-gotrue.md): the
// original's flow_state rows are adopted with everything the callback needs — the referrer, the invite
// token, the linking target, email_optional — and, for a provider that requires PKCE (X), the code
// verifier the original kept in oauth_client_states. A user who approved at X just before the switch comes
// back to this service's /callback and is signed in: X itself checks the verifier against the challenge the
// original sent it.
import t from 'tap';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { migrate } from '../dist/db/migrate.js';
import { secretBox } from '../dist/server/mfa/encryption.js';
import { JWT_SECRET, startTestService } from './helpers/server.js';
import { callback, fragmentOf, providerEnv } from './helpers/oauth.js';
import { CLIENT_ID, CLIENT_SECRET, REDIRECT_URI, checkCodeGrant, startProviderFake, userEndpoint } from './helpers/provider-fakes.js';
import { ALICE, createOriginalDatabase } from './helpers/gotrue-db.js';

const sealSecret = (rowId: string, stored: string) =>
  secretBox({
    jwt: { secret: JWT_SECRET },
    security: { dbEncryption: { encrypt: false, encryptionKeyId: '', encryptionKey: '', decryptionKeys: {} } },
  } as any).sealIfClear(rowId, stored);

/** What the original did at GET /authorize?provider=x: a verifier, kept aside, and its challenge sent to X. */
const verifier = randomBytes(32).toString('base64url');
const challengeSentToX = createHash('sha256').update(verifier).digest('base64url');
const X_FLOW = randomUUID();
const CLIENT_STATE = randomUUID();
/** Alice linking GitHub, begun with an invite token; and a linking flow of a user deleted since. */
const LINKING_FLOW = randomUUID();
const ORPHANED_FLOW = randomUUID();

const x = await startProviderFake({
  'POST /2/oauth2/token': (req) =>
    checkCodeGrant(req, { code: 'x-code', credentials: 'basic', codeChallenge: challengeSentToX }) ?? {
      json: { token_type: 'bearer', expires_in: 7200, access_token: 'x-access', refresh_token: 'x-refresh', scope: 'users.read' },
    },
  'GET /2/users/me': userEndpoint('x-access', {
    data: { id: '2244994945', name: 'X Dev', username: 'XDevelopers', confirmed_email: 'dev@x.example' },
  }),
});
t.teardown(() => x.close());

const original = await createOriginalDatabase(async (c) => {
  await c.query(`insert into auth.oauth_client_states (id, provider_type, code_verifier, created_at) values ($1, 'x', $2, now())`, [
    CLIENT_STATE,
    verifier,
  ]);
  await c.query(
    `insert into auth.flow_state (id, provider_type, authentication_method, referrer, oauth_client_state_id, created_at, updated_at)
     values ($1, 'x', 'oauth', 'http://localhost:3000/welcome', $2, now() - interval '1 minute', now() - interval '1 minute')`,
    [X_FLOW, CLIENT_STATE],
  );
  await c.query(
    `insert into auth.flow_state (id, provider_type, authentication_method, invite_token, linking_target_id, email_optional,
                                  created_at, updated_at)
     values ($1, 'github', 'oauth', 'invite-token-1', $2, true, now(), now()),
            ($3, 'github', 'oauth', null, gen_random_uuid(), false, now(), now())`,
    [LINKING_FLOW, ALICE.id, ORPHANED_FLOW],
  );
});
t.teardown(() => original.drop());

const lines: string[] = [];
await migrate(original.url, 'auth', (line: string) => lines.push(line), { sealSecret });

t.test('the flow states are adopted with their context; a linking flow of a deleted user is dropped', async (t) => {
  t.ok(lines.includes('flow states copied: 2 rows'), 'the linking flow of a deleted user is not among them');
  const { rows } = await original.query(
    `select id, provider_type, referrer, invite_token, linking_target_id, email_optional, provider_code_verifier
     from auth.flow_state order by provider_type`,
  );
  t.strictSame(rows, [
    {
      id: LINKING_FLOW,
      provider_type: 'github',
      referrer: null,
      invite_token: 'invite-token-1',
      linking_target_id: ALICE.id,
      email_optional: true,
      provider_code_verifier: null,
    },
    {
      id: X_FLOW,
      provider_type: 'x',
      referrer: 'http://localhost:3000/welcome',
      invite_token: null,
      linking_target_id: null,
      email_optional: false,
      provider_code_verifier: verifier,
    },
  ]);
});

t.test('the user who approved at X before the switch is signed in at our /callback', async (t) => {
  const api = await startTestService({
    DATABASE_URL: original.url,
    AUTH_SITE_URL: 'http://localhost:3000',
    AUTH_URI_ALLOW_LIST: 'http://localhost:3000/**',
    ...providerEnv('x', { clientId: CLIENT_ID, secret: CLIENT_SECRET, redirectUri: REDIRECT_URI, url: x.url }),
  });
  t.teardown(() => api.stop());

  const { location } = await callback(api, new URLSearchParams({ code: 'x-code', state: X_FLOW }));
  t.equal(location.origin + location.pathname, 'http://localhost:3000/welcome', "the original's referrer");
  const fragment = fragmentOf(location);
  t.ok(fragment.access_token, JSON.stringify(Object.fromEntries(location.searchParams)));
  t.equal(x.received('POST /2/oauth2/token').at(-1)?.form.get('code_verifier'), verifier, "the original's verifier reached X");
  const me = await api.request('GET', '/user', { token: fragment.access_token });
  t.equal(me.body.email, 'dev@x.example');
  t.match(me.body.identities, [{ provider: 'x', id: '2244994945' }]);
});
