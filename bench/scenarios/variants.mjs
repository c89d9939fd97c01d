// token-refresh and user on a service configured otherwise (issue 14): access tokens signed with an
// ES256 key from JWT_KEYS, or shaped by the custom access token hook, over HTTP (an endpoint in its own
// process that verifies the Standard Webhooks signature) or as a Postgres function. Each starts its own
// service with the run's options and the same seeding, and is compared with its limit in the same run:
// the ES256 ones with the unchanged SQL limit (the difference is the signature), the hook ones with the
// grant's statements plus the hook call through the service's own transport code.
import { randomBytes } from 'node:crypto';
import { startBenchService } from '../lib/service.mjs';
import { benchContext } from '../lib/context.mjs';
import { seedUsers } from '../lib/seed.mjs';
import { startHookEndpoint } from '../lib/hook-endpoint.mjs';
import { generateJwk } from '../../dist/server/auth/keys.js';
import { REFRESH_CONNECTIONS, runRefresh } from './token-refresh.mjs';
import { USER_CONNECTIONS, runUser } from './user.mjs';

/** A schema of the bench's own for the hook function, dropped afterwards (BENCH_DATABASE_URL is shared). */
const HOOK_SCHEMA = `bench_hooks_${randomBytes(4).toString('hex')}`;
const HOOK_FUNCTION = `${HOOK_SCHEMA}.custom_access_token`;
const HOOK_URI = `pg-functions://postgres/${HOOK_SCHEMA}/custom_access_token`;

/** A payload of the size the service sends to the hook on a refresh, for the limit's own hook calls. */
const samplePayload = () => ({
  metadata: { uuid: '00000000-0000-4000-8000-000000000000', time: new Date().toISOString(), name: 'customize-access-token' },
  user_id: '00000000-0000-4000-8000-000000000001',
  claims: {
    sub: '00000000-0000-4000-8000-000000000001',
    aud: 'authenticated',
    exp: 2000000000,
    iat: 1900000000,
    email: 'bench-user-0@example.com',
    phone: '',
    app_metadata: { provider: 'email', providers: ['email'] },
    user_metadata: { email: 'bench-user-0@example.com', email_verified: true, phone_verified: false },
    role: 'authenticated',
    aal: 'aal1',
    amr: [{ method: 'password', timestamp: 1900000000 }],
    session_id: '00000000-0000-4000-8000-000000000002',
    is_anonymous: false,
  },
  authentication_method: 'token_refresh',
});

/** Runs `fn(bench)` against a service of its own started with `env`, seeded with just enough users. */
async function onOwnService(bench, env, sessions, fn, { before } = {}) {
  const options = { ...bench.options, users: sessions };
  const service = await startBenchService(options, { env });
  try {
    await seedUsers(service, sessions);
    await before?.(service);
    return await fn(benchContext(options, service));
  } finally {
    await service.stop();
  }
}

const es256 = () => ({ AUTH_JWT_KEYS: JSON.stringify([generateJwk('ES256')]) });

export const tokenRefreshEs256 = {
  name: 'token-refresh-es256',
  describe: 'token-refresh with access tokens signed by an ES256 key (JWT_KEYS)',
  run: (bench) => onOwnService(bench, es256(), REFRESH_CONNECTIONS, (b) => runRefresh(b, { title: 'token-refresh-es256' })),
};

export const userEs256 = {
  name: 'user-es256',
  describe: 'GET /user with ES256 access tokens (JWT_KEYS), verified inline',
  run: (bench) => onOwnService(bench, es256(), USER_CONNECTIONS, (b) => runUser(b, { title: 'user-es256' })),
};

export const tokenRefreshHookHttp = {
  name: 'token-refresh-hook-http',
  describe: 'token-refresh with the custom access token hook over HTTP (Standard Webhooks signed and verified)',
  async run(bench) {
    const endpoint = await startHookEndpoint();
    const env = {
      AUTH_HOOK_CUSTOM_ACCESS_TOKEN_ENABLED: 'true',
      AUTH_HOOK_CUSTOM_ACCESS_TOKEN_URI: endpoint.url,
      AUTH_HOOK_CUSTOM_ACCESS_TOKEN_SECRETS: endpoint.secret,
    };
    try {
      return await onOwnService(bench, env, REFRESH_CONNECTIONS, (b) =>
        runRefresh(b, {
          title: 'token-refresh-hook-http',
          kind: 'refresh-hook',
          extraFixture: { hook: { kind: 'http', url: endpoint.url, secrets: [endpoint.secret] }, hookPayload: samplePayload() },
          limitKind: "the grant's statements + the HTTP hook call/s, same pools",
        }),
      );
    } finally {
      await endpoint.stop();
    }
  },
};

export const tokenRefreshHookPg = {
  name: 'token-refresh-hook-pg',
  describe: 'token-refresh with the custom access token hook as a Postgres function',
  run: (bench) =>
    onOwnService(
      bench,
      { AUTH_HOOK_CUSTOM_ACCESS_TOKEN_ENABLED: 'true', AUTH_HOOK_CUSTOM_ACCESS_TOKEN_URI: HOOK_URI },
      REFRESH_CONNECTIONS,
      async (b) => {
        try {
          return await runRefresh(b, {
            title: 'token-refresh-hook-pg',
            kind: 'refresh-hook',
            extraFixture: { hook: { kind: 'pg', qualifiedName: HOOK_FUNCTION, uri: HOOK_URI }, hookPayload: samplePayload() },
            limitKind: "the grant's statements + the hook function call/s, same pools",
          });
        } finally {
          await b.service.db.query(`drop schema if exists ${HOOK_SCHEMA} cascade`);
        }
      },
      {
        // Before any sign-in: the password grant that makes the sessions calls it too.
        before: (service) =>
          service.db.query(`
            create schema ${HOOK_SCHEMA};
            create function ${HOOK_FUNCTION}(event jsonb) returns jsonb language sql stable as
              $$ select jsonb_build_object('claims', (event->'claims') || '{"tenant": "bench"}'::jsonb) $$;`),
      },
    ),
};
