#!/usr/bin/env node
// The official client's own integration suite (supabase-js, packages/core/auth-js/test) run against this
// checkout's dist/: the drop-in promise checked with the client's tests rather than ours. Nothing of
// supabase-js is kept in this repository: the package is exported from a checkout named on the command
// line into a scratch directory, its test dependencies are installed there at pinned versions (as
// bench/lib/peer.mjs installs its peer, never as a project dependency), and jest runs the client's two
// sets: the CLI set against one instance behind a Kong stand-in, the docker-tests against four instances
// on the compose file's ports (auth-js-instances.mjs).
//
//   npm run compat:auth-js -- <supabase-js work tree or bare git dir> [--ref v2.109.0] [--keep]
//
// --ref: the commit, tag or branch to export (default HEAD: a work tree's uncommitted changes are not run).
// --keep: leave the scratch directory (the tests, node_modules, logs/ of every instance) in place.
// Needs `npm run build` first, git, tar, the npm registry, and a PostgreSQL superuser URL in
// TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres) to create its two databases on.
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import pg from 'pg';
import { authJsInstances, CLI_PORT, DOCKER_PORTS, GATEWAY_PORT } from './auth-js-instances.mjs';
import { startGateway, startMailSink } from './auth-js-stand-ins.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const PACKAGE = 'packages/core/auth-js';
const run = promisify(execFile);

/**
 * Exact versions in place of the package's `catalog:` entries (pnpm's workspace catalog, which means
 * nothing outside the monorepo) and its ranges, so that runs compare. prettier is there because the jest
 * configs resolve it; a new `catalog:` entry at another ref must be added here.
 */
const PINS = {
  jest: '30.2.0',
  'ts-jest': '29.4.15',
  typescript: '5.8.3',
  '@types/jest': '30.0.0',
  '@types/node': '20.19.9',
  jsonwebtoken: '9.0.3',
  '@types/jsonwebtoken': '9.0.10',
  '@faker-js/faker': '9.9.0',
  'jest-mock-server': '0.1.0',
  prettier: '3.10.1',
  tslib: '2.8.1',
};
/** Needed only by what is not run here: the API docs and the jsdom (browser) test file. */
const UNUSED = new Set(['typedoc', 'jest-environment-jsdom']);

/**
 * The two jest runs. Of the CLI config's files, those that call the service plus ethereum.test.ts (the
 * Sign-In with Ethereum messages the service parses); the others are unit tests of the client on fakes.
 */
const SETS = [
  {
    label: 'CLI set',
    args: ['--config', 'jest.config.cli.js', '--coverage=false'],
    files: ['test/GoTrueClient.test.ts', 'test/GoTrueApi.test.ts', 'test/passkey.e2e.test.ts', 'test/ethereum.test.ts'],
  },
  { label: 'docker-tests', args: ['--config', 'jest.config.docker.js'], files: [] },
];

const HEALTH_TIMEOUT_MS = 60_000;
const INSTALL_TIMEOUT_MS = 10 * 60_000;
const JEST_TIMEOUT_MS = 15 * 60_000;
const STOP_TIMEOUT_MS = 10_000;

const USAGE = 'usage: npm run compat:auth-js -- <supabase-js work tree or bare git dir> [--ref v2.109.0] [--keep]';
let options, positionals;
try {
  ({ values: options, positionals } = parseArgs({
    allowPositionals: true,
    options: { ref: { type: 'string', default: 'HEAD' }, keep: { type: 'boolean', default: false } },
  }));
} catch (err) {
  console.error(`${err.message}\n${USAGE}`);
  process.exit(2);
}
if (positionals.length !== 1) {
  console.error(USAGE);
  process.exit(2);
}
if (!existsSync(path.join(ROOT, 'dist/server/main.js'))) {
  console.error('auth-js suite: dist/ is missing; run `npm run build` first');
  process.exit(2);
}
// The embedded database's port probe, from the build (hence after the check above).
const { canListen } = await import('../../dist/db/embedded/local-port.js');

/**
 * Undone in reverse order by teardown(), whatever happened before, once every child has exited. Teardown
 * starts at a signal while the run may still be between steps: what the run sets up after that is undone
 * by the final drain(), and no child starts any more (step, track).
 */
const undo = [];
const children = new Set();
let tearingDown = null;
let signalled = null;
const teardown = () => (tearingDown ??= drain());
async function drain() {
  await Promise.all([...children].map((child) => stop(child)));
  while (undo.length) {
    const undoLast = undo.pop();
    await undoLast().catch((err) => console.error(`auth-js suite: teardown: ${err.message}`));
  }
}
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
  ['SIGHUP', 129],
]) {
  process.on(signal, () => {
    if (signalled) return;
    signalled = { signal, code };
    console.error(`\nauth-js suite: ${signal}, tearing down`);
    void teardown();
    // The run's own end follows at once (its children are gone); this only bounds a step that hangs.
    setTimeout(() => process.exit(code), 30_000).unref();
  });
}

const started = Date.now();
let result = { passed: 0, failed: 1 };
try {
  result = await main(path.resolve(positionals[0]), options);
} catch (err) {
  if (!signalled) console.error(`auth-js suite: ${err.message}`);
} finally {
  await teardown();
  await drain();
}
console.log(`auth-js suite: finished and torn down in ${Math.round((Date.now() - started) / 1000)} s`);
console.log(`auth-js suite: ${result.passed} passed, ${result.failed} failed`);
process.exit(signalled ? signalled.code : result.failed === 0 && result.passed > 0 ? 0 : 1);

async function main(source, { ref, keep }) {
  for (const port of [GATEWAY_PORT, CLI_PORT, ...Object.values(DOCKER_PORTS)]) {
    if (!(await canListen(port))) throw new Error(`port ${port} is in use (the client's tests need it free)`);
  }
  const commit = await git(source, ['rev-parse', '--verify', `${ref}^{commit}`]).catch(() => {
    throw new Error(`${source} is not a git work tree or directory holding ${ref}`);
  });
  // First, so that a database server that cannot be reached stops the run before the install.
  const databases = await createDatabases(['cli', 'docker']);

  const scratch = mkdtempSync(path.join(os.tmpdir(), 'portcullis-auth-js-'));
  undo.push(async () => {
    if (keep) console.log(`auth-js suite: kept ${scratch}`);
    else rmSync(scratch, { recursive: true, force: true });
  });
  const pkg = path.join(scratch, PACKAGE);
  const logs = path.join(scratch, 'logs');
  mkdirSync(logs);

  // The package, and the monorepo's tsconfig.base.json its tsconfig.json extends (ts-jest reads it).
  console.log(`auth-js suite: ${PACKAGE} at ${ref} (${commit.slice(0, 12)}) into ${scratch}`);
  const tar = path.join(scratch, 'export.tar');
  await git(source, ['archive', '--format=tar', `--output=${tar}`, commit, '--', PACKAGE, 'tsconfig.base.json']);
  await run('tar', ['-xf', tar, '-C', scratch]);
  rmSync(tar);

  const manifest = path.join(pkg, 'package.json');
  const { pinned, kept } = pinManifest(manifest);
  console.log(`auth-js suite: npm install ${pinned.join(' ')}${kept.length ? ` (ranges as given: ${kept.join(' ')})` : ''}`);
  // --ignore-scripts: nothing the tests need builds at install time; no lock file, audit or funding noise.
  await step('npm install', ['npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--no-package-lock', '--loglevel=error']], {
    cwd: pkg,
    timeout: INSTALL_TIMEOUT_MS,
  });

  // The RS256 key the CLI set signs its API keys and admin token with, made by the client's own script
  // (test/supabase/signing_keys.json, as its CI makes it before `supabase start`).
  await step('generate-signing-keys.js', [process.execPath, ['test/generate-signing-keys.js']], { cwd: pkg, timeout: 30_000 });
  const [signingKey] = JSON.parse(readFileSync(path.join(pkg, 'test/supabase/signing_keys.json'), 'utf8'));
  // The HS256 secrets the tests sign their own tokens with are the client's to choose: read, not assumed.
  const cliSecret = constantIn(pkg, 'test/lib/clients.ts', 'GOTRUE_JWT_SECRET');
  const dockerSecret = constantIn(pkg, 'test/docker-tests/clients.ts', 'DOCKER_JWT_SECRET');

  const sink = await startMailSink();
  undo.push(() => sink.close());
  const gateway = await startGateway(GATEWAY_PORT, CLI_PORT);
  undo.push(() => gateway.close());

  const instances = authJsInstances({ cliSecret, dockerSecret, signingKey, smtpPort: sink.port, databases });
  await Promise.all(instances.map((instance) => startInstance(instance, scratch, logs)));
  console.log(`auth-js suite: ${instances.map((i) => `${i.name} :${i.port}`).join(', ')} healthy; mail sink :${sink.port}`);

  const files = [];
  for (const set of SETS) files.push(...(await runJest(set, pkg, logs)));
  if (keep || files.some((f) => f.failed))
    console.log(`auth-js suite: service logs in ${logs}${keep ? '' : ' (rerun with --keep to read them)'}`);

  console.log(`\nauth-js suite: the mail sink received ${sink.received} messages`);
  for (const f of files) console.log(`  ${f.name}: ${f.passed} passed, ${f.failed} failed${f.note ? ` (${f.note})` : ''}`);
  return { passed: files.reduce((n, f) => n + f.passed, 0), failed: files.reduce((n, f) => n + f.failed, 0) };
}

/** Writes the manifest back with PINS in place of `catalog:` and ranges, without the packages in UNUSED. */
function pinManifest(file) {
  const manifest = JSON.parse(readFileSync(file, 'utf8'));
  const pinned = [];
  const kept = [];
  for (const field of ['dependencies', 'devDependencies']) {
    const deps = {};
    for (const [name, version] of Object.entries(manifest[field] ?? {})) {
      if (UNUSED.has(name)) continue;
      if (PINS[name]) {
        deps[name] = PINS[name];
        pinned.push(`${name}@${PINS[name]}`);
      } else if (/^(catalog|workspace):/.test(version)) {
        throw new Error(
          `${name} is "${version}" in the package and has no pinned version: add it to PINS in test/compat/auth-js-suite.mjs`,
        );
      } else {
        deps[name] = version;
        kept.push(`${name}@${version}`);
      }
    }
    manifest[field] = deps;
  }
  writeFileSync(file, JSON.stringify(manifest, null, 2) + '\n');
  return { pinned, kept };
}

/** The string a test file assigns to `name` (`const NAME = '...'`, exported or not). */
function constantIn(pkg, file, name) {
  const found = readFileSync(path.join(pkg, file), 'utf8').match(new RegExp(`\\b${name}\\s*=\\s*(['"])([^'"]+)\\1`));
  if (!found) throw new Error(`${file} no longer assigns ${name}: the tool needs to learn where the tests' secret is now`);
  return found[2];
}

/** Two fresh databases on TEST_DATABASE_URL's server, dropped at teardown; their URLs by key. */
async function createDatabases(keys) {
  const admin = new URL(process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres');
  const query = async (sql) => {
    const client = new pg.Client({ connectionString: admin.href, connectionTimeoutMillis: 10_000 });
    try {
      await client.connect();
      await client.query(sql);
    } catch (err) {
      throw new Error(`${sql} on ${admin.host} (TEST_DATABASE_URL): ${err.message}`, { cause: err });
    } finally {
      await client.end().catch(() => {});
    }
  };
  const urls = {};
  const suffix = randomBytes(4).toString('hex');
  for (const key of keys) {
    const name = `auth_js_${key}_${suffix}`;
    await query(`create database "${name}"`);
    // FORCE ends the connections of an instance that did not stop in time.
    undo.push(() => query(`drop database if exists "${name}" with (force)`));
    const url = new URL(admin.href);
    url.pathname = `/${name}`;
    urls[key] = url.href;
  }
  return urls;
}

/**
 * Starts one instance from this checkout's bin/ and resolves once its /health answers 200. It runs in the
 * scratch directory (no .env there) with only the settings given: nothing leaks in from the shell.
 */
async function startInstance({ name, port, settings }, cwd, logs) {
  const log = openSync(path.join(logs, `${name}.log`), 'a');
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, ...settings };
  const child = track(spawn(process.execPath, [path.join(ROOT, 'bin/portcullis.js'), 'serve'], { cwd, env, stdio: ['ignore', log, log] }));
  closeSync(log);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const since = Date.now();
  const deadline = since + HEALTH_TIMEOUT_MS;
  while (Date.now() < deadline && !tearingDown) {
    if (child.exitCode !== null || child.signalCode !== null) break;
    const healthy = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(2_000) }).then(
      (res) => res.ok,
      () => false,
    );
    if (healthy) return;
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 200))]);
  }
  const tail = readFileSync(path.join(logs, `${name}.log`), 'utf8')
    .trim()
    .split('\n')
    .slice(-5)
    .join('\n');
  const why = child.exitCode !== null || child.signalCode !== null ? `exited (${child.exitCode ?? child.signalCode})` : 'is not healthy';
  throw new Error(`instance ${name} on :${port} ${why} after ${Math.round((Date.now() - since) / 1000)} s:\n${tail}`);
}

/** One jest invocation (output on this terminal), read back from its --json report: one entry per file. */
async function runJest({ label, args, files }, pkg, logs) {
  const report = path.join(logs, `jest-${label.replace(/\W+/g, '-')}.json`);
  console.log(`\nauth-js suite: ${label}`);
  const jest = path.join(pkg, 'node_modules/jest/bin/jest.js');
  const exit = await step(
    `jest (${label})`,
    [process.execPath, [jest, ...args, '--runInBand', '--json', `--outputFile=${report}`, ...files]],
    {
      cwd: pkg,
      timeout: JEST_TIMEOUT_MS,
      stdio: ['ignore', 'ignore', 'inherit'],
      allowFailure: true,
    },
  );
  if (!existsSync(report)) return [{ name: label, passed: 0, failed: 1, note: `jest wrote no report (exit ${exit})` }];
  const { testResults } = JSON.parse(readFileSync(report, 'utf8'));
  return testResults.map((file) => {
    const count = (status) => file.assertionResults.filter((a) => a.status === status).length;
    const entry = { name: path.relative(pkg, file.name), passed: count('passed'), failed: count('failed') };
    const skipped = file.assertionResults.length - entry.passed - entry.failed;
    if (skipped) entry.note = `${skipped} skipped`;
    // A file that did not compile or load has no results of its own: one failure, not none.
    if (file.status === 'failed' && entry.failed === 0) Object.assign(entry, { failed: 1, note: 'the file failed to run' });
    return entry;
  });
}

/**
 * Runs `command` to its end as a tracked child (killed by teardown), within `timeout`. Its output is kept
 * and shown only if it fails, unless `stdio` says otherwise; `allowFailure` resolves with the exit code.
 */
function step(label, [command, args], { cwd, timeout, stdio = ['ignore', 'pipe', 'pipe'], allowFailure = false }) {
  return new Promise((resolve, reject) => {
    if (tearingDown) return reject(new Error(`${label}: not started, tearing down`));
    const child = track(spawn(command, args, { cwd, stdio }));
    let output = '';
    child.stdout?.on('data', (chunk) => (output += chunk));
    child.stderr?.on('data', (chunk) => (output += chunk));
    const timer = setTimeout(() => {
      output += `\n(timed out after ${timeout / 1000} s)`;
      void stop(child);
    }, timeout);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`${label}: ${err.message}`));
    });
    child.once('close', (exitCode, signal) => {
      clearTimeout(timer);
      if (tearingDown) reject(new Error(`${label}: stopped, tearing down`));
      else if (exitCode === 0 || allowFailure) resolve(exitCode ?? 1);
      else reject(new Error(`${label} failed (${exitCode ?? signal}):\n${output.trim().split('\n').slice(-30).join('\n')}`));
    });
  });
}

function track(child) {
  child.on('error', () => {}); // a child that cannot start is reported by its caller (exit code, health)
  // Started while teardown is under way (a step that was awaiting something else): it must not outlive us.
  if (tearingDown) child.kill('SIGKILL');
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** SIGTERM (the service drains and exits), then SIGKILL if it has not exited within STOP_TIMEOUT_MS. */
function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

async function git(dir, args) {
  // -C works for a work tree and a bare repository alike; a work tree's checkout is left as it is.
  const { stdout } = await run('git', ['-C', dir, ...args], { maxBuffer: 16 * 1024 * 1024 });
  return stdout.trim();
}
