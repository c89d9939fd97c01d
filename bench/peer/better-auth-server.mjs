// The peer the `peer` scenario compares Portcullis with: better-auth with email + password, served by
// Node's http server through better-auth's own node handler, on PostgreSQL. This file is copied into the
// scratch directory where bench/lib/peer.mjs installed better-auth, and runs there as a process of its own
// (so its CPU is read apart from the bench's and the service's, and its imports resolve from that
// directory's node_modules, never the project's). It creates its tables with better-auth's migration API,
// seeds confirmed users with one hash made by better-auth's own hashPassword (a verify costs the same
// whatever the salt, as the bench's own seeding assumes), then reports over IPC.
import http from 'node:http';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { betterAuth } from 'better-auth';
import { toNodeHandler } from 'better-auth/node';
import { getMigrations } from 'better-auth/db/migration';
import { hashPassword } from 'better-auth/crypto';

const { databaseUrl, secret, users, password, emailPrefix, poolSize } = JSON.parse(process.env.PEER_SETTINGS);

const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize });
const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const baseURL = `http://127.0.0.1:${server.address().port}`;

const options = {
  baseURL,
  secret,
  database: pool,
  emailAndPassword: { enabled: true },
  // The service under test applies no per-client limit in the bench either (no AUTH_RATE_LIMIT_HEADER).
  rateLimit: { enabled: false },
  telemetry: { enabled: false },
};
const auth = betterAuth(options);
const { runMigrations } = await getMigrations(options);
await runMigrations();

const hash = await hashPassword(password);
await pool.query(
  `with created as (
     insert into "user" (id, name, email, "emailVerified", "createdAt", "updatedAt")
     select gen_random_uuid()::text, 'bench user ' || i, $2 || i || '@example.com', true, now(), now()
     from generate_series(0, $3 - 1) as i
     returning id)
   insert into account (id, "accountId", "providerId", "userId", password, "createdAt", "updatedAt")
   select gen_random_uuid()::text, id, 'credential', id, $1, now(), now() from created`,
  [hash, emailPrefix, users],
);

server.on('request', toNodeHandler(auth));
process.send({ type: 'ready', url: baseURL, version: packageVersion('better-auth'), hashing: hashingParameters() });
// Requests autocannon abandoned at the end of a phase may still be running: ending the pool under them
// only prints errors. The bench drops the whole database (with force) after this process has gone.
process.on('message', (message) => {
  if (message?.type !== 'stop') return;
  server.closeAllConnections();
  process.exit(0);
});

function packageVersion(name) {
  return JSON.parse(readFileSync(new URL(`./node_modules/${name}/package.json`, import.meta.url), 'utf8')).version;
}

/**
 * The password hash better-auth uses, read from the installed package rather than assumed: its node
 * implementation's scrypt configuration block (`const config = { N, r, p, dkLen }`).
 */
function hashingParameters() {
  try {
    // npm installs the scratch directory flat; the package's exports map hides this file from resolve()
    const utils = readFileSync(new URL('./node_modules/@better-auth/utils/dist/password.node.mjs', import.meta.url), 'utf8');
    const block = /const config = \{([^}]*)\}/.exec(utils)?.[1] ?? '';
    const params = Object.fromEntries([...block.matchAll(/(\w+):\s*(\d+)/g)].map(([, k, v]) => [k, Number(v)]));
    const algorithm = /\bscrypt\(/.test(utils) ? 'scrypt (node:crypto, libuv threadpool)' : 'unknown';
    return { algorithm, ...params, hashLength: hash.length };
  } catch (err) {
    return { algorithm: `unknown (${err.message})` };
  }
}
