// The bench runs end to end (not timed): every scenario for half a second a phase against one started service,
// with cheap hash parameters, and writes a well-formed results file.
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestDatabase } from './helpers/db.js';

const SCENARIOS = [
  'token-password',
  'token-refresh',
  'user',
  'settings',
  'signup',
  'mixed',
  'overload',
  'token-refresh-es256',
  'user-es256',
  'token-refresh-hook-http',
  'token-refresh-hook-pg',
];

/** Runs a bench script with more environment; its exit code and everything it printed. */
function runScript(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.on('close', (code) => resolve({ code, output }));
  });
}

const runBench = (env: Record<string, string>, scenarios: string[] = []) => runScript(['bench/run.mjs', ...scenarios], env);

// Every scenario end to end, then a second run and the parity scenario, half a second a phase: about 85 s
// alone on a 2-core machine, twice that beside another file in CI, so this file asks for more than the
// suite's per-file limit. Most of it is each scenario's setup (sessions, limit processes), not its phases.
t.setTimeout(600_000);

const database = await createTestDatabase();
t.teardown(() => database.drop());
const resultsDir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-bench-results-'));
t.teardown(() => rmSync(resultsDir, { recursive: true, force: true }));
const run = await runBench({
  BENCH_DURATION: '0.5',
  BENCH_USERS: '50',
  BENCH_DATABASE_URL: database.url,
  BENCH_RESULTS_DIR: resultsDir,
  BENCH_QUIET: '1',
  AUTH_PASSWORD_HASH_MEMORY_KIB: '1024',
  AUTH_PASSWORD_HASH_TIME_COST: '1',
  AUTH_HTTP_WORKERS: '2',
  AUTH_CRYPTO_WORKERS: '2',
});

/** The one results file the run above wrote, read once for the tests that look into it. */
let cachedResults: any;
function resultsFile(): any {
  if (!cachedResults) {
    const [file] = readdirSync(resultsDir).filter((f) => f.endsWith('.json'));
    cachedResults = JSON.parse(readFileSync(path.join(resultsDir, file), 'utf8'));
  }
  return cachedResults;
}

t.test('the bench exits cleanly and prints one line per scenario and the table', async (t) => {
  t.equal(run.code, 0, run.output);
  for (const name of SCENARIOS) t.match(run.output, new RegExp(`^  ${name} `, 'm'), `a line for ${name}`);
  t.match(run.output, /^\| scenario \| req\/s \| p50 ms \| p99 ms \| limit \| ratio \| target \|$/m);
});

t.test('the results file has numbers for every scenario and no error responses', async (t) => {
  t.equal(readdirSync(resultsDir).filter((f) => f.endsWith('.json')).length, 1);
  const results = resultsFile();
  t.match(results.settings, {
    httpWorkers: 2,
    cryptoWorkers: 2,
    dbPoolPerThread: 10,
    duration: 0.5,
    users: 50,
    hash: { memoryKiB: 1024, timeCost: 1, parallelism: 1 },
    database: 'BENCH_DATABASE_URL',
  });
  t.same(Object.keys(results.scenarios), SCENARIOS);
  for (const name of SCENARIOS) {
    const r = results.scenarios[name];
    if (name.startsWith('token-refresh') && r.skipped) {
      t.match(r.skipped, /unsupported_grant_type/, 'skipped only for a build without the refresh grant');
      continue;
    }
    t.notOk(r.error, `${name} ran`);
    for (const key of ['reqPerSec', 'p50', 'p99', 'limit', 'ratio']) {
      t.ok(Number.isFinite(r[key]) && r[key] > 0, `${name}.${key} is a positive number (${r[key]})`);
    }
    t.type(r.limitKind, 'string');
    t.equal(r.non2xx, 0, `${name}: no non-2xx responses ${JSON.stringify(r.statuses ?? {})}`);
    if (name !== 'mixed') t.equal(r.errors, 0, `${name}: no connection errors`);
    if (name === 'overload') {
      // Refusals (503) are what it measures; anything else but 200 would be counted in non2xx above.
      t.same(
        Object.keys(r.statuses).filter((s) => s !== '200' && s !== '503'),
        [],
        'overload: only accepted and refused',
      );
      t.ok(
        r.accepted.count > 0 && Number.isFinite(r.refused.p99) && Number.isFinite(r.health.p99),
        'overload: accepted, refused and /health measured',
      );
    }
  }
  const mixed = results.scenarios.mixed;
  t.ok(Number.isFinite(mixed.health.p99), 'mixed measured /health');
  t.ok(mixed.phases.alone[mixed.probe].requests > 0 && mixed.phases.flood.password.requests > 0, 'both phases ran');
});

t.test("issue 19's targets are judged, and every CPU line shows the service's main thread on its own", async (t) => {
  const { scenarios } = resultsFile();
  t.equal(scenarios.settings.target, 0.9, 'settings: 0.9 of bare uWS');
  t.equal(scenarios['token-password'].target, 0.95, 'password grant: 0.95 of argon2id');
  const user = scenarios.user.handler;
  t.match(user, { target: 0.75, cpuTarget: 1.3 }, "GET /user: 0.75 of the minimal handler's req/s, 1.3x its CPU");
  t.ok(user.cpuRatio > 0 && typeof user.meetsCpuTarget === 'boolean', `GET /user's CPU ratio is judged (${user.cpuRatio})`);
  t.equal(user.meetsCpuTarget, user.cpuRatio <= 1.3);
  const refresh = scenarios['token-refresh'];
  if (!refresh.skipped) {
    t.equal(refresh.databaseCpu.target, 1.5, "refresh: the database's CPU per grant within 1.5x the statements'");
    t.ok(refresh.databaseCpu.ratio > 0, `the database CPU ratio is measured (${refresh.databaseCpu.ratio})`);
    t.equal(refresh.databaseCpu.meetsTarget, refresh.databaseCpu.ratio <= 1.5);
  }
  for (const name of ['user', 'settings', 'token-password']) {
    const load = scenarios[name].cpu.load;
    t.ok(
      load.serviceMainThreadUs > 0 && load.serviceMainThreadUs < load.serviceUs,
      `${name}: the main thread's CPU (${load.serviceMainThreadUs} µs) is a part of the service's (${load.serviceUs} µs)`,
    );
  }
  t.match(run.output, /^\| user \(CPU\) \|.*\| ≤ 1\.3 (ok|missed) \|$/m, 'the table has a row for the CPU target');
});

t.test("the service is warmed up on each scenario's own requests before it is measured, as the limits are", async (t) => {
  const { scenarios } = resultsFile();
  for (const name of ['settings', 'user', 'token-refresh', 'token-password', 'signup']) {
    const r = scenarios[name];
    if (r.skipped) continue;
    t.ok(r.warmup?.seconds > 0 && r.warmup.seconds <= 1, `${name}: a warm-up of ${r.warmup?.seconds} s`);
    t.ok(r.warmup.requests > 0, `${name}: ${r.warmup.requests} requests answered in the warm-up, not counted`);
    t.equal(r.warmup.non2xx, 0, `${name}: the warm-up's answers were all 2xx`);
  }
});

t.test('`npm run bench -- <scenario>` runs only those, with a progress line, and measures the crypto pool', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-bench-some-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const some = await runBench(
    {
      BENCH_DURATION: '0.5',
      BENCH_USERS: '20',
      BENCH_DATABASE_URL: database.url,
      BENCH_RESULTS_DIR: dir,
      BENCH_PROGRESS: '1',
      AUTH_PASSWORD_HASH_MEMORY_KIB: '1024',
      AUTH_PASSWORD_HASH_TIME_COST: '1',
      AUTH_HTTP_WORKERS: '1',
      AUTH_CRYPTO_WORKERS: '2',
    },
    ['settings', 'crypto-choices'],
  );
  t.equal(some.code, 0, some.output);
  // eslint-disable-next-line no-control-regex -- the progress line is drawn with a terminal escape
  t.match(some.output, /\r\x1b\[2K {2}settings +[\d.]+\/0\.5 s {2}\d+ req {2}\d+ req\/s/, 'a progress line for the load');
  const results = JSON.parse(readFileSync(path.join(dir, readdirSync(dir)[0]), 'utf8'));
  t.same(Object.keys(results.scenarios), ['settings', 'crypto-choices'], 'only the scenarios asked for');
  const measured = results.scenarios['crypto-choices'].measured;
  for (const threads of ['argon2id_1', 'argon2id_2']) {
    t.ok(measured[threads].direct.mean > 0 && measured[threads].pooled.mean > 0, `${threads}: argon2id direct and through the pool`);
  }
  t.ok(measured.jwt.signs > 0 && measured.jwt.verifies > 0, 'HS256 signs and verifies inline');
  for (const alg of ['ES256', 'EdDSA', 'RS256'])
    t.ok(measured.jwtKeys[alg].signs > 0 && measured.jwtKeys[alg].verifies > 0, `${alg} signs and verifies inline`);
  t.ok(measured.noopRoundTripMs > 0, "the pool's own round trip");
});

t.test('`npm run bench -- parity` prints the medians of known and unknown addresses per endpoint', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-bench-parity-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const run = await runBench(
    {
      BENCH_DURATION: '0.5',
      BENCH_DATABASE_URL: database.url,
      BENCH_RESULTS_DIR: dir,
      AUTH_PASSWORD_HASH_MEMORY_KIB: '1024',
      AUTH_PASSWORD_HASH_TIME_COST: '1',
      AUTH_HTTP_WORKERS: '1',
      AUTH_CRYPTO_WORKERS: '2',
    },
    ['parity'],
  );
  t.equal(run.code, 0, run.output);
  const { measured } = JSON.parse(readFileSync(path.join(dir, readdirSync(dir)[0]), 'utf8')).scenarios.parity;
  const variants = Object.fromEntries(Object.entries(measured).map(([endpoint, m]: [string, any]) => [endpoint, Object.keys(m.medians)]));
  t.strictSame(variants, {
    'password grant': ['known', 'unknown', 'banned'],
    recover: ['known', 'unknown'],
    magiclink: ['known', 'unknown'],
    otp: ['known', 'unknown'],
    signup: ['new', 'existing'],
    'resend signup': ['pending', 'unknown'],
  });
  for (const [endpoint, m] of Object.entries<any>(measured)) {
    t.ok(
      Object.values(m.medians).every((ms) => (ms as number) > 0),
      `${endpoint}: a median per variant`,
    );
    // Each variant took the path it is named for: the answers are the ones a real client would get.
    const expected = endpoint === 'password grant' ? 400 : 200;
    t.strictSame(
      Object.keys(m.statuses).sort(),
      Object.keys(m.medians)
        .map((v) => `${v} ${expected}`)
        .sort(),
      `${endpoint}: every answer ${expected}`,
    );
    t.match(run.output, new RegExp(`parity +${endpoint} +medians: `), `${endpoint}: its line`);
  }
});

// bench/user-path.mjs runs outside the bench's scenarios, so nothing else would notice it break when the
// request path's modules change (as it once did, unnoticed, when the request line began to take headers).
t.test('bench/user-path.mjs runs GET /user through the service and the minimal handler and prints its line', async (t) => {
  for (const mode of ['service', 'handler']) {
    const run = await runScript(['bench/user-path.mjs', mode], { BENCH_USER_PATH_REQUESTS: '400' });
    t.equal(run.code, 0, `${mode}: exits cleanly\n${run.output}`);
    t.match(
      run.output,
      new RegExp(`^${mode}: µs of CPU per request, 5 runs: (\\d+\\.\\d ){4}\\d+\\.\\d; best \\d+\\.\\d$`, 'm'),
      `${mode}: its line`,
    );
  }
});
