// PKCE end to end (REFERENCE §4.6, §2.2): a code_challenge on /signup, /magiclink, /otp and /recover puts a
// pkce_ token in the link; following it redirects with ?code=; POST /token?grant_type=pkce exchanges the
// code and the verifier for a session. Every refusal of the exchange, and the errors of pkce_ links.
import t, { type Test } from 'tap';
import { startMailStack, linkOf, codeOf, fragmentOf, pkcePair } from './helpers/passwordless.js';

const stack = await startMailStack({ AUTH_EXTERNAL_PHONE_ENABLED: 'true', AUTH_SMTP_MAX_FREQUENCY: '1ms' });
const { api, smtp } = stack;
t.teardown(() => stack.stop());

const exchange = (auth_code: string, code_verifier: string) =>
  api.request('POST', '/token?grant_type=pkce', { body: { auth_code, code_verifier } });
/** Ages the last recovery-token mail past the 60 s floor between two of them. */
const allowMail = () => api.db.query("update users set recovery_sent_at = now() - interval '1 hour' where email = 'pk@example.com'");
async function send(path: string, body: Record<string, unknown>) {
  await allowMail();
  return api.request('POST', path, { body });
}
const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString());
const lastLoginTraits = async (userId: string) =>
  (
    await api.db.query(
      `select payload -> 'traits' as traits from audit_log_entries
        where payload ->> 'actor_id' = $1 and payload ->> 'action' = 'login' order by created_at desc limit 1`,
      [userId],
    )
  ).rows[0]?.traits;
const flowsOf = async (email: string) =>
  (await api.db.query('select f.* from flow_state f join users u on u.id = f.user_id where u.email = $1', [email])).rows;

/** Follows a mail's link and returns the auth code from the 303's query. */
async function followForCode(t: Test, mail: Parameters<typeof linkOf>[0]): Promise<{ code: string; location: string }> {
  const link = linkOf(mail);
  t.match(link.token, /^pkce_[0-9a-f]{56}$/, 'the link carries a pkce_ token');
  const res = await api.request('GET', link.path);
  t.equal(res.status, 303);
  const location = res.headers.get('location')!;
  t.notOk(location.includes('#'), 'no session in a fragment');
  return { code: new URL(location).searchParams.get('code')!, location };
}

t.test('signup: confirmation link → ?code= → exchange → session with AMR email/signup; the flow is spent', async (t) => {
  const { verifier, challenge } = await pkcePair();
  const signup = await api.request('POST', '/signup', {
    body: { email: 'pk@example.com', password: 'secret-password', code_challenge: challenge, code_challenge_method: 'S256' },
  });
  t.equal(signup.status, 200);
  const [flow] = await flowsOf('pk@example.com');
  t.match(flow, {
    authentication_method: 'email/signup',
    provider_type: 'email',
    code_challenge_method: 's256',
    code_challenge: challenge,
    auth_code_issued_at: null,
  });
  const { code, location } = await followForCode(t, await smtp.waitForMail('pk@example.com'));
  t.equal(location, `http://localhost:3000?code=${code}`);
  t.equal(code, flow.auth_code);
  t.ok((await flowsOf('pk@example.com'))[0].auth_code_issued_at, 'the issue of the code is recorded');
  const res = await exchange(code, verifier);
  t.equal(res.status, 200);
  t.equal(res.body.user.email, 'pk@example.com');
  t.ok(res.body.user.email_confirmed_at);
  t.notOk('type' in res.body);
  t.strictSame(
    claimsOf(res.body.access_token).amr.map((a: { method: string }) => a.method),
    ['email/signup'],
  );
  t.strictSame(await flowsOf('pk@example.com'), []);
  t.strictSame(await lastLoginTraits(res.body.user.id), { provider_type: 'email' }, "the exchange's login names the flow's origin");
  t.strictSame(
    (await exchange(code, verifier)).body,
    { code: 404, error_code: 'flow_state_not_found', msg: 'invalid flow state, no valid flow state found' },
    'a code works once',
  );
});

t.test('signup: phone with a code_challenge is refused', async (t) => {
  const { challenge } = await pkcePair();
  const res = await api.request('POST', '/signup', {
    body: { phone: '+15550007777', password: 'secret-password', code_challenge: challenge, code_challenge_method: 's256' },
  });
  t.strictSame(res.body, { code: 400, error_code: 'validation_failed', msg: 'PKCE not supported for phone signups' });
});

t.test(
  'a PKCE field that is not a string is refused in Go words naming it, on every route that reads one; nothing is written',
  async (t) => {
    const { challenge } = await pkcePair();
    const email = 'pk-typed@example.com';
    // Each route decodes into its own Go type, named in the refusal as the original's decoder names it;
    // /magiclink words its refusals its own way.
    const bodies: Array<[string, Record<string, unknown>, string, string]> = [
      ['/signup', { email, password: 'secret-password' }, 'SignupParams', 'Could not parse request body as JSON'],
      ['/magiclink', { email }, 'MagicLinkParams', 'Could not read verification params'],
      ['/otp', { email }, 'OtpParams', 'Could not parse request body as JSON'],
      ['/recover', { email }, 'RecoverParams', 'Could not parse request body as JSON'],
      ['/resend', { type: 'signup', email }, 'ResendConfirmationParams', 'Could not parse request body as JSON'],
    ];
    for (const [path, body, struct, words] of bodies) {
      for (const [field, wrong, kind] of [
        ['code_challenge', 42, 'number'],
        ['code_challenge_method', ['s256'], 'array'],
      ] as const) {
        const pkce = { code_challenge: challenge, code_challenge_method: 's256', [field]: wrong };
        const res = await api.request('POST', path, { body: { ...body, ...pkce } });
        t.strictSame(
          [res.status, res.body],
          [
            400,
            {
              code: 400,
              error_code: 'bad_json',
              msg: `${words}: json: cannot unmarshal ${kind} into Go struct field ${struct}.${field} of type string`,
            },
          ],
          `${path} ${field}`,
        );
      }
    }
    t.strictSame(await flowsOf(email), [], 'no flow stored');
    t.equal((await api.db.query('select 1 from users where email = $1', [email])).rowCount, 0, 'nobody signed up');
    // null is what auth-js sends outside a PKCE flow: read as absent.
    const implicit = await api.request('POST', '/magiclink', { body: { email, code_challenge: null, code_challenge_method: null } });
    t.equal(implicit.status, 200);
    t.notOk(linkOf(await smtp.waitForMail(email)).token.startsWith('pkce_'), 'an implicit-flow link');
  },
);

t.test("magic link (plain method): the redirect keeps the target's query; AMR magiclink", async (t) => {
  await api.db.query("update users set email_confirmed_at = now() where email = 'pk@example.com'");
  const verifier = 'v'.repeat(50);
  await allowMail();
  const res = await api.request('POST', '/magiclink?redirect_to=' + encodeURIComponent('http://localhost:3000/cb?next=/home'), {
    body: { email: 'pk@example.com', code_challenge: verifier, code_challenge_method: 'plain' },
  });
  t.equal(res.status, 200);
  const { code, location } = await followForCode(t, await smtp.waitForMail('pk@example.com'));
  t.equal(location, `http://localhost:3000/cb?code=${code}&next=%2Fhome`);
  const session = await exchange(code, verifier);
  t.equal(session.status, 200);
  t.strictSame(
    claimsOf(session.body.access_token).amr.map((a: { method: string }) => a.method),
    ['magiclink'],
  );
});

t.test('/otp and /recover links finish PKCE flows too', async (t) => {
  for (const [path, method] of [
    ['/otp', 'magiclink'],
    ['/recover', 'recovery'],
  ] as const) {
    const { verifier, challenge } = await pkcePair();
    t.equal((await send(path, { email: 'pk@example.com', code_challenge: challenge, code_challenge_method: 's256' })).status, 200);
    t.equal((await flowsOf('pk@example.com'))[0].provider_type, method, 'the flow is named by its origin, as the original names it');
    const mail = await smtp.waitForMail('pk@example.com');
    t.equal(linkOf(mail).type, method === 'magiclink' ? 'magiclink' : 'recovery');
    const { code } = await followForCode(t, mail);
    const session = await exchange(code, verifier);
    t.equal(session.status, 200, path);
    t.strictSame(await lastLoginTraits(session.body.user.id), { provider_type: method });
    t.strictSame(
      claimsOf(session.body.access_token).amr.map((a: { method: string }) => a.method),
      [method],
    );
  }
});

t.test('the code of a PKCE mail still verifies with POST /verify', async (t) => {
  const { challenge } = await pkcePair();
  await send('/recover', { email: 'pk@example.com', code_challenge: challenge, code_challenge_method: 's256' });
  const res = await api.request('POST', '/verify', {
    body: { type: 'recovery', email: 'pk@example.com', token: codeOf(await smtp.waitForMail('pk@example.com')) },
  });
  t.equal(res.status, 200);
  t.equal(res.body.type, 'recovery');
});

t.test('exchange refusals', async (t) => {
  t.strictSame((await exchange('', 'x')).body, {
    code: 400,
    error_code: 'validation_failed',
    msg: 'invalid request: both auth code and code verifier should be non-empty',
  });
  t.strictSame((await exchange('x', '')).body, {
    code: 400,
    error_code: 'validation_failed',
    msg: 'invalid request: both auth code and code verifier should be non-empty',
  });
  const nulls = await api.request('POST', '/token?grant_type=pkce', { body: { auth_code: null, code_verifier: 'x' } });
  t.strictSame(
    nulls.body,
    { code: 400, error_code: 'validation_failed', msg: 'invalid request: both auth code and code verifier should be non-empty' },
    'null is an empty string, as the original decodes it',
  );
  t.strictSame((await exchange('00000000-0000-4000-8000-000000000000', 'x')).body, {
    code: 404,
    error_code: 'flow_state_not_found',
    msg: 'invalid flow state, no valid flow state found',
  });

  const { verifier, challenge } = await pkcePair();
  await send('/recover', { email: 'pk@example.com', code_challenge: challenge, code_challenge_method: 's256' });
  const { code } = await followForCode(t, await smtp.waitForMail('pk@example.com'));
  const wrong = await exchange(code, verifier + 'x');
  t.equal(wrong.status, 400);
  t.strictSame(wrong.body, {
    code: 400,
    error_code: 'bad_code_verifier',
    msg: 'code challenge does not match previously saved code verifier',
  });
  await api.db.query("update flow_state set created_at = now() - interval '301 seconds' where auth_code = $1", [code]);
  const expired = await exchange(code, verifier);
  t.equal(expired.status, 422);
  t.strictSame(expired.body, { code: 422, error_code: 'flow_state_expired', msg: 'invalid flow state, flow state has expired' });
});

t.test('a magic-link flow expires from the moment its link was followed, not from its creation', async (t) => {
  const { verifier, challenge } = await pkcePair();
  await send('/magiclink', { email: 'pk@example.com', code_challenge: challenge, code_challenge_method: 's256' });
  const { code } = await followForCode(t, await smtp.waitForMail('pk@example.com'));
  await api.db.query("update flow_state set created_at = now() - interval '1 hour' where auth_code = $1", [code]);
  t.equal((await exchange(code, verifier)).status, 200, 'created an hour ago, followed just now');

  const second = await pkcePair();
  await send('/magiclink', { email: 'pk@example.com', code_challenge: second.challenge, code_challenge_method: 's256' });
  const followed = await followForCode(t, await smtp.waitForMail('pk@example.com'));
  await api.db.query("update flow_state set auth_code_issued_at = now() - interval '301 seconds' where auth_code = $1", [followed.code]);
  t.equal((await exchange(followed.code, second.verifier)).body.error_code, 'flow_state_expired');
});

t.test('pkce_ link errors go to the query and the fragment', async (t) => {
  const { challenge } = await pkcePair();
  await allowMail();
  await api.request('POST', '/recover?redirect_to=http://localhost:3000/cb', {
    body: { email: 'pk@example.com', code_challenge: challenge, code_challenge_method: 's256' },
  });
  const link = linkOf(await smtp.waitForMail('pk@example.com'));
  await api.db.query("delete from flow_state where user_id = (select id from users where email = 'pk@example.com')");
  const missing = await api.request('GET', link.path);
  const expected =
    'error=invalid_request&error_code=flow_state_not_found&error_description=No+associated+flow+state+found.+422%3A+No+valid+flow+state+found+for+user.';
  // The fragment escaped once more, as the original's URL.String escapes the fragment it sets (`%` as `%25`).
  const fragment = expected.replace(/%/g, '%25');
  t.equal(missing.headers.get('location'), `http://localhost:3000/cb?${expected}#${fragment}&sb=`, 'the mark in the fragment only');
  const { rows } = await api.db.query("select 1 from one_time_tokens o join users u on u.id = o.user_id where u.email = 'pk@example.com'");
  t.equal(rows.length, 1, 'without its flow the link is not spent');

  await api.db.query("update one_time_tokens set created_at = now() - interval '2 days'");
  const expired = await api.request('GET', link.path);
  const location = expired.headers.get('location')!;
  t.strictSame({ ...Object.fromEntries(new URL(location).searchParams), sb: '' }, fragmentOf(location));
  t.equal(fragmentOf(location).error_code, 'otp_expired');
});

t.test('magic link with PKCE for a new address: the confirmation link finishes an email/signup flow', async (t) => {
  const { verifier, challenge } = await pkcePair();
  t.equal(
    (
      await api.request('POST', '/magiclink', {
        body: { email: 'fresh@example.com', code_challenge: challenge, code_challenge_method: 's256' },
      })
    ).status,
    200,
  );
  const mail = await smtp.waitForMail('fresh@example.com');
  t.equal(linkOf(mail).type, 'signup');
  const { code } = await followForCode(t, mail);
  const session = await exchange(code, verifier);
  t.equal(session.status, 200);
  t.ok(session.body.user.email_confirmed_at);
  t.strictSame(
    claimsOf(session.body.access_token).amr.map((a: { method: string }) => a.method),
    ['email/signup'],
  );
});

t.test("/resend of a sign-up's mail with PKCE names its flow email/signup, as the original", async (t) => {
  const { challenge } = await pkcePair();
  t.equal((await api.request('POST', '/signup', { body: { email: 'pk-resend@example.com', password: 'secret-password' } })).status, 200);
  await smtp.waitForMail('pk-resend@example.com');
  const res = await api.request('POST', '/resend', {
    body: { type: 'signup', email: 'pk-resend@example.com', code_challenge: challenge, code_challenge_method: 's256' },
  });
  t.equal(res.status, 200);
  await smtp.waitForMail('pk-resend@example.com');
  t.match(await flowsOf('pk-resend@example.com'), [{ provider_type: 'email/signup', authentication_method: 'email/signup' }]);
});
