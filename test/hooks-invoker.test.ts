// The hook invoker on its own (src/server/hooks/): the MFA verification attempt hook the MFA endpoints
// will call, over HTTP and as a Postgres function; an unreachable endpoint; the hook settings' checks,
// including the GOTRUE_HOOK_ names operators moving over already have.
import t from 'tap';
import { loadConfig, ConfigError } from '../dist/server/config/load.js';
import { enforceMfaVerificationAttempt, mfaVerificationAttempt } from '../dist/server/hooks/mfa-verification-attempt.js';
import { insertSessionRows } from './helpers/db.js';
import { ApiError } from '../dist/server/errors.js';
import { freePort } from './helpers/server.js';
import { useMigratedDatabase } from './helpers/db.js';
import { captureLog } from './helpers/log.js';
import { newHookSecret, startHookServer } from './helpers/hook-server.js';

const PROD = {
  DATABASE_URL: 'postgres://u@db/x',
  AUTH_DB_DRIVER: 'postgres',
  AUTH_JWT_SECRET: 'a-secret-of-sufficient-length',
  AUTH_SITE_URL: 'https://app.example.com',
  AUTH_API_EXTERNAL_URL: 'https://auth.example.com',
};
const problemsOf = (env: Record<string, string>) => {
  try {
    loadConfig({ env: { ...PROD, ...env }, envFile: null });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
};

const database = useMigratedDatabase(t);
const hooks = await startHookServer();
t.teardown(() => hooks.close());

/** What invokeHook needs of the application context, for the MFA hook pointed at `uri`. */
function contextFor(uri: string, secrets = hooks.secret) {
  const config = loadConfig({
    env: {
      ...PROD,
      AUTH_HOOK_MFA_VERIFICATION_ATTEMPT_ENABLED: 'true',
      AUTH_HOOK_MFA_VERIFICATION_ATTEMPT_URI: uri,
      AUTH_HOOK_MFA_VERIFICATION_ATTEMPT_SECRETS: secrets,
    },
    envFile: null,
  });
  return { config, db: database.pool, log: captureLog().log };
}
const attempt = {
  userId: '0b0e9c4c-2a65-4a43-9c2c-5f7f3f5d6a01',
  factorId: '9d3f6a0e-0f0a-4d9e-8a55-3d6f0e1c2b77',
  factorType: 'totp',
  valid: false,
};
const failure = async (promise: Promise<unknown>) => {
  try {
    await promise;
  } catch (err) {
    if (err instanceof ApiError) return [err.status, err.errorCode, err.message];
    throw err;
  }
  return null;
};

t.test('MFA verification attempt over HTTP: the original’s payload, continue and reject', async (t) => {
  const ctx = contextFor(`${hooks.url}/mfa`);
  hooks.once(
    '/mfa',
    { body: { decision: 'continue' } },
    { body: { decision: 'reject' } },
    { body: { decision: 'reject', message: 'Too many tries' } },
  );
  t.same(await mfaVerificationAttempt(ctx, attempt, { ip: '203.0.113.9' }), {
    reject: false,
    message: 'Further MFA verification attempts will be rejected.',
  });
  const call = hooks.callsTo('/mfa')[0];
  t.ok(call.verified, 'the endpoint verified the signature');
  t.same(Object.keys(call.payload).sort(), ['factor_id', 'factor_type', 'metadata', 'user_id', 'valid']);
  t.match(call.payload, {
    user_id: attempt.userId,
    factor_id: attempt.factorId,
    factor_type: 'totp',
    valid: false,
    metadata: { name: 'mfa-verification', ip_address: '203.0.113.9' },
  });
  t.same(await mfaVerificationAttempt(ctx, attempt, {}), { reject: true, message: 'Further MFA verification attempts will be rejected.' });
  t.same(await mfaVerificationAttempt(ctx, attempt, {}), { reject: true, message: 'Too many tries' });
});

t.test('enforceMfaVerificationAttempt: a rejection ends every session of the user and is 403', async (t) => {
  const ctx = contextFor(`${hooks.url}/mfa`);
  const { rows } = await database.pool.query(
    `insert into users (aud, role, email) values ('authenticated', 'authenticated', 'mfa@example.com') returning id`,
  );
  const userId = rows[0].id;
  await insertSessionRows(database.pool, { userId, userAgent: 'test', ip: '127.0.0.1' });
  await insertSessionRows(database.pool, { userId, userAgent: 'test', ip: '127.0.0.1' });
  hooks.once('/mfa', { body: { decision: 'continue' } }, { body: { decision: 'reject', message: 'Locked' } });
  await enforceMfaVerificationAttempt(ctx, { ...attempt, userId }, {});
  const count = async () => Number((await database.pool.query('select count(*) from sessions where user_id = $1', [userId])).rows[0].count);
  t.equal(await count(), 2, 'continue leaves the sessions');
  t.same(await failure(enforceMfaVerificationAttempt(ctx, { ...attempt, userId }, {})), [403, 'mfa_verification_rejected', 'Locked']);
  t.equal(await count(), 0);
});

t.test('MFA verification attempt: an answer that does not decode is the original’s 500, and no session ends', async (t) => {
  const ctx = contextFor(`${hooks.url}/mfa`);
  const { rows } = await database.pool.query(
    `insert into users (aud, role, email) values ('authenticated', 'authenticated', 'mfa-undecodable@example.com') returning id`,
  );
  const userId = rows[0].id;
  await insertSessionRows(database.pool, { userId, userAgent: 'test', ip: '127.0.0.1' });
  const answer = (json: string) => ({ status: 200, headers: { 'content-type': 'application/json' }, body: json });
  for (const json of ['{"decision":"reject","message":1}', '{"decision":["reject"]}', '"reject"', '12345']) {
    hooks.once('/mfa', answer(json));
    t.same(
      await failure(enforceMfaVerificationAttempt(ctx, { ...attempt, userId }, {})),
      [500, 'unexpected_failure', 'Error unmarshaling JSON output.'],
      json,
    );
  }
  const count = Number((await database.pool.query('select count(*) from sessions where user_id = $1', [userId])).rows[0].count);
  t.equal(count, 1, 'the session was kept');
  hooks.once('/mfa', answer('null'), answer('{"DECISION":"reject","message":null}'));
  t.same(await mfaVerificationAttempt(ctx, attempt, {}), { reject: false, message: 'Further MFA verification attempts will be rejected.' });
  t.same(await mfaVerificationAttempt(ctx, attempt, {}), { reject: true, message: 'Further MFA verification attempts will be rejected.' });
});

t.test('MFA verification attempt off: null, nothing called', async (t) => {
  const config = loadConfig({ env: PROD, envFile: null });
  const before = hooks.calls.length;
  t.equal(await mfaVerificationAttempt({ config, db: database.pool, log: captureLog().log }, attempt, {}), null);
  t.equal(hooks.calls.length, before);
});

t.test('MFA verification attempt as a Postgres function', async (t) => {
  await database.pool.query(`
    create table public.mfa_events (event jsonb);
    create function public.mfa_attempt(event jsonb) returns jsonb language plpgsql as $$
    begin
      insert into public.mfa_events values (event);
      if (event->>'valid')::boolean then return jsonb_build_object('decision', 'continue'); end if;
      return jsonb_build_object('decision', 'reject', 'message', 'Factor locked');
    end $$;`);
  const ctx = contextFor('pg-functions://postgres/public/mfa_attempt', '');
  t.same(await mfaVerificationAttempt(ctx, attempt, {}), { reject: true, message: 'Factor locked' });
  t.same(await mfaVerificationAttempt(ctx, { ...attempt, valid: true }, {}), {
    reject: false,
    message: 'Further MFA verification attempts will be rejected.',
  });
  const { rows } = await database.pool.query('select event from public.mfa_events');
  t.equal(rows.length, 2);
  t.match(rows[0].event, {
    user_id: attempt.userId,
    factor_id: attempt.factorId,
    factor_type: 'totp',
    metadata: { name: 'mfa-verification' },
  });
});

t.test('MFA verification attempt as a Postgres function returning text: parsed as JSON, decoded as the output', async (t) => {
  await database.pool.query(`
    create function public.mfa_text(event jsonb) returns text language sql as
      $$ select case when (event->>'valid')::boolean then '{"decision": 1}' else '{"decision": "reject", "message": "From text"}' end $$;`);
  const ctx = contextFor('pg-functions://postgres/public/mfa_text', '');
  t.same(await mfaVerificationAttempt(ctx, attempt, {}), { reject: true, message: 'From text' });
  t.same(await failure(mfaVerificationAttempt(ctx, { ...attempt, valid: true }, {})), [
    500,
    'unexpected_failure',
    'Error unmarshaling JSON output.',
  ]);
});

t.test('an endpoint nobody listens on is tried three times, then 422 hook_timeout_after_retry', async (t) => {
  const ctx = contextFor(`http://127.0.0.1:${await freePort()}/mfa`);
  t.same(await failure(mfaVerificationAttempt(ctx, attempt, {})), [
    422,
    'hook_timeout_after_retry',
    'Failed to reach hook after maximum retries',
  ]);
});

t.test('a signature the endpoint does not know is its 401: the original’s 500', async (t) => {
  const ctx = contextFor(`${hooks.url}/mfa`, newHookSecret());
  t.same(await failure(mfaVerificationAttempt(ctx, attempt, {})), [500, 'unexpected_failure', 'Hook requires authorization token']);
  t.notOk(hooks.calls.at(-1)!.verified);
});

t.test('hook settings: names as the original’s, checked at start-up', async (t) => {
  const secret = newHookSecret();
  const config = loadConfig({
    env: {
      ...PROD,
      GOTRUE_HOOK_CUSTOM_ACCESS_TOKEN_ENABLED: 'true',
      GOTRUE_HOOK_CUSTOM_ACCESS_TOKEN_URI: 'https://hooks.example.com/claims',
      GOTRUE_HOOK_CUSTOM_ACCESS_TOKEN_SECRETS: `${secret}|${newHookSecret()}`,
      AUTH_HOOK_SEND_SMS_URI: 'pg-functions://postgres/public/send_sms',
    },
    envFile: null,
  });
  t.same(config.hooks.customAccessToken.enabled, true);
  t.equal(config.hooks.customAccessToken.secrets.length, 2);
  t.equal(config.hooks.customAccessToken.secrets[0], secret);
  t.same(config.hooks.sendSms, { enabled: false, uri: 'pg-functions://postgres/public/send_sms', secrets: [] });
  for (const name of ['BEFORE_USER_CREATED', 'SEND_EMAIL', 'PASSWORD_VERIFICATION_ATTEMPT', 'MFA_VERIFICATION_ATTEMPT']) {
    t.same(problemsOf({ [`AUTH_HOOK_${name}_ENABLED`]: 'true' }), [`AUTH_HOOK_${name}_URI: is required when HOOK_${name}_ENABLED is true`]);
  }
  t.same(problemsOf({ AUTH_HOOK_SEND_EMAIL_URI: 'http://hooks.example.com/mail' }), [
    'AUTH_HOOK_SEND_EMAIL_URI: only localhost, 127.0.0.1 and ::1 are supported with http (use https)',
  ]);
  t.same(problemsOf({ AUTH_HOOK_SEND_EMAIL_URI: 'ftp://hooks.example.com/mail' }), [
    'AUTH_HOOK_SEND_EMAIL_URI: only pg-functions:// (Postgres functions) and https:// endpoints are supported',
  ]);
  t.same(problemsOf({ AUTH_HOOK_SEND_EMAIL_URI: 'pg-functions://postgres/public' }), [
    'AUTH_HOOK_SEND_EMAIL_URI: "pg-functions://postgres/public" must name pg-functions://postgres/<schema>/<function>',
  ]);
  t.same(problemsOf({ AUTH_HOOK_SEND_EMAIL_URI: 'pg-functions://postgres/public/drop;table' }), [
    'AUTH_HOOK_SEND_EMAIL_URI: invalid function name: drop;table',
  ]);
  t.same(problemsOf({ AUTH_HOOK_SEND_EMAIL_URI: 'https://hooks.example.com/mail', AUTH_HOOK_SEND_EMAIL_SECRETS: 'whsec_abc' }), [
    'AUTH_HOOK_SEND_EMAIL_SECRETS: 1 secret(s) not of the form v1,whsec_<base64> (separate several with |)',
  ]);
  t.same(problemsOf({ AUTH_HOOK_SEND_EMAIL_URI: 'http://localhost:9999/mail', AUTH_HOOK_SEND_EMAIL_SECRETS: secret }), []);
  // User info that cannot be decoded into Basic credentials would fail every call; the credentials are not echoed.
  t.same(
    problemsOf({ AUTH_HOOK_SEND_EMAIL_URI: 'https://hook-user:100%-sure@hooks.example.com/mail', AUTH_HOOK_SEND_EMAIL_SECRETS: secret }),
    ["AUTH_HOOK_SEND_EMAIL_URI: its user info holds a '%' that starts no escape (write a '%' as %25)"],
  );
  t.same(
    problemsOf({ AUTH_HOOK_SEND_EMAIL_URI: 'https://hook-user:100%25-sure@hooks.example.com/mail', AUTH_HOOK_SEND_EMAIL_SECRETS: secret }),
    [],
  );
  const httpHook = { AUTH_HOOK_SEND_EMAIL_ENABLED: 'true', AUTH_HOOK_SEND_EMAIL_URI: 'https://hooks.example.com/mail' };
  t.same(problemsOf({ ...httpHook, AUTH_DB_IDLE_IN_TRANSACTION_TIMEOUT: '3s' }), [
    "AUTH_DB_IDLE_IN_TRANSACTION_TIMEOUT: must be longer than an HTTP hook's 5 s (or 0)",
  ]);
  t.same(problemsOf({ ...httpHook, AUTH_DB_IDLE_IN_TRANSACTION_TIMEOUT: '0' }), []);
});

t.test('JWT_SECRET is not required when JWT_KEYS is set', async (t) => {
  const { AUTH_JWT_SECRET: _secret, ...noSecret } = PROD;
  const problems = (env: Record<string, string>) => {
    try {
      loadConfig({ env: { ...noSecret, ...env }, envFile: null });
    } catch (err) {
      if (err instanceof ConfigError) return err.problems;
      throw err;
    }
    return [];
  };
  t.same(problems({}), ['AUTH_JWT_SECRET: is required when DATABASE_URL is set and JWT_KEYS is not']);
  const { generateJwk } = await import('../dist/server/auth/keys.js');
  t.same(problems({ AUTH_JWT_KEYS: JSON.stringify([generateJwk('ES256')]) }), []);
});
