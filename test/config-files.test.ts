// The original's configuration files (docs/settings.md#configuration-files): `-c/--config FILE` and
// `-d/--config-dir DIR`, read in its order of precedence, given before or after the command, and a file
// that cannot be read stopping the start with a message naming it. Most cases run the real binary.
import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { configSources, loadConfig, loadFromSources } from '../dist/server/config/load.js';
import { parseDotenv } from '../dist/server/config/dotenv.js';
import { parseCommandLine } from '../dist/server/cli-flags.js';
import { freePort, testServiceEnv } from './helpers/server.js';
import { createTestDatabase } from './helpers/db.js';
import { runPortcullis } from './helpers/cli.js';

const bin = path.resolve('bin/portcullis.js');
const scratch = () => mkdtempSync(path.join(os.tmpdir(), 'config-files-'));
const write = (dir: string, name: string, text: string) => {
  writeFileSync(path.join(dir, name), text);
  return path.join(dir, name);
};
const PROD = {
  DATABASE_URL: 'postgres://u@127.0.0.1/x',
  AUTH_DB_DRIVER: 'postgres',
  AUTH_JWT_SECRET: 'a-secret-that-is-long-enough',
  API_EXTERNAL_URL: 'http://localhost',
};

t.test('precedence: the directory over the -c file over the environment; .env only without -c', async (t) => {
  const root = scratch();
  const dotEnv = write(root, '.env', 'GOTRUE_SITE_URL=http://dotenv.example\nGOTRUE_JWT_EXP=11\nGOTRUE_SMS_OTP_LENGTH=7\n');
  const file = write(root, 'auth.env', 'GOTRUE_SITE_URL=http://file.example\nGOTRUE_JWT_EXP=22\n');
  const dir = path.join(root, 'auth.d');
  mkdirSync(dir);
  write(dir, '50_auth.env', 'GOTRUE_JWT_EXP=33\n');
  const env = { ...PROD, AUTH_SITE_URL: 'http://environment.example', AUTH_JWT_EXP: '44', GOTRUE_MAILER_OTP_EXP: '120' };

  const plain = loadConfig({ env, envFile: dotEnv });
  t.strictSame(
    [plain.siteUrl, plain.jwt.exp, plain.sms.otpLength],
    ['http://environment.example', 44, 7],
    'no flags: environment, then .env',
  );

  const withFile = loadConfig({ env, envFile: dotEnv, configFile: file });
  t.equal(withFile.siteUrl, 'http://file.example', 'the -c file beats even AUTH_ in the environment');
  t.equal(withFile.jwt.exp, 22);
  t.equal(withFile.sms.otpLength, 6, '.env is not read when -c is given');
  t.equal(withFile.mailer.otpExpSeconds, 120, 'what the file leaves out still comes from the environment');
  t.equal(withFile.sources.SITE_URL, `GOTRUE_SITE_URL (${file})`, 'the source names the file');

  const withDir = loadConfig({ env, envFile: dotEnv, configFile: file, configDir: dir });
  t.equal(withDir.jwt.exp, 33, 'the directory beats the -c file');
  t.equal(withDir.siteUrl, 'http://file.example', 'and leaves the rest to it');
  t.equal(withDir.sources.JWT_EXP, `GOTRUE_JWT_EXP (${path.join(dir, '50_auth.env')})`);
});

t.test("a bare alias is read only when its setting's prefixed names are set in no source, as the original", async (t) => {
  const root = scratch();
  const base = { AUTH_DB_DRIVER: 'postgres', AUTH_JWT_SECRET: 'a-secret-that-is-long-enough', AUTH_SITE_URL: 'http://x.example' };
  const file = write(root, 'auth.env', 'PORT=3000\nAPI_EXTERNAL_URL=http://file.example\n');
  const env = {
    ...base,
    DATABASE_URL: 'postgres://u@127.0.0.1/x',
    GOTRUE_API_PORT: '9999',
    GOTRUE_API_API_EXTERNAL_URL: 'http://env.example',
  };
  const withFile = loadConfig({ env, envFile: null, configFile: file });
  t.equal(withFile.api.port, 9999, "the environment's GOTRUE_API_PORT over the -c file's PORT");
  t.equal(withFile.api.externalUrl, 'http://env.example');

  const dotEnv = write(root, '.env', 'GOTRUE_DB_DATABASE_URL=postgres://u@from-dotenv/db\nGOTRUE_API_PORT=7000\n');
  const platform = { ...base, API_EXTERNAL_URL: 'http://x.example', DATABASE_URL: 'postgres://u@from-platform/db', PORT: '8080' };
  const withDotEnv = loadConfig({ env: platform, envFile: dotEnv });
  t.equal(withDotEnv.db.url, 'postgres://u@from-dotenv/db', "a platform's DATABASE_URL does not beat .env's GOTRUE_DB_DATABASE_URL");
  t.equal(withDotEnv.api.port, 7000, 'nor its PORT GOTRUE_API_PORT');
  t.equal(withDotEnv.sources.DB_DATABASE_URL, 'GOTRUE_DB_DATABASE_URL (.env)');

  const dir = path.join(root, 'auth.d');
  mkdirSync(dir);
  write(dir, '50_db.env', 'DATABASE_URL=postgres://u@from-dir/db\n');
  const env2 = { ...base, API_EXTERNAL_URL: 'http://x.example', GOTRUE_DB_DATABASE_URL: 'postgres://u@from-env/db' };
  t.equal(
    loadConfig({ env: env2, envFile: null, configDir: dir }).db.url,
    'postgres://u@from-env/db',
    "the directory's DATABASE_URL does not beat it either",
  );
  t.equal(
    loadConfig({ env: { ...env2, GOTRUE_DB_DATABASE_URL: '' }, envFile: null, configDir: dir }).db.url,
    'postgres://u@from-dir/db',
    'alone, it is read',
  );
});

t.test('a config directory holding a file named just .env reads it', async (t) => {
  const dir = scratch();
  write(dir, '.env', 'GOTRUE_JWT_EXP=77\n');
  const c = loadConfig({ env: { ...PROD, AUTH_SITE_URL: 'http://x.example' }, envFile: null, configDir: dir });
  t.equal(c.jwt.exp, 77);
  t.equal(c.sources.JWT_EXP, `GOTRUE_JWT_EXP (${path.join(dir, '.env')})`);
});

t.test('the directory: name order, X.json replacing X.env, other files and subdirectories skipped', async (t) => {
  const dir = scratch();
  write(dir, '10_base.env', 'GOTRUE_JWT_EXP=100\nGOTRUE_SMS_OTP_LENGTH=8\n');
  write(dir, '10_base.json', JSON.stringify({ GOTRUE_JWT_EXP: '200' }));
  write(dir, '20_site.env', 'GOTRUE_SITE_URL=http://twenty.example\n');
  write(
    dir,
    '30_site.json',
    JSON.stringify({ GOTRUE_SITE_URL: 'http://thirty.example', GOTRUE_DISABLE_SIGNUP: true, GOTRUE_MAILER_OTP_EXP: 90 }),
  );
  write(dir, '90_late.env.bak', 'GOTRUE_SITE_URL=http://backup.example\n');
  write(dir, '95_notes.txt', 'GOTRUE_SITE_URL=http://notes.example\n');
  mkdirSync(path.join(dir, '99_sub.env'));
  const c = loadConfig({ env: PROD, envFile: null, configDir: dir });
  t.equal(c.jwt.exp, 200, 'the JSON twin is read');
  t.equal(c.sms.otpLength, 6, 'instead of its .env, not over it');
  t.equal(c.siteUrl, 'http://thirty.example', 'a later name overrides an earlier one; .bak, .txt and directories are skipped');
  t.equal(c.disableSignup, true, 'a JSON boolean is taken as its text');
  t.equal(c.mailer.otpExpSeconds, 90, 'a JSON number too');
});

t.test('files that cannot be used are named in the error', async (t) => {
  const dir = scratch();
  const problems = (options: Parameters<typeof loadConfig>[0]) => {
    try {
      loadConfig({ env: { ...PROD, AUTH_SITE_URL: 'http://x.example' }, envFile: null, ...options });
      return 'loaded';
    } catch (err) {
      return (err as Error).message;
    }
  };
  t.match(problems({ configFile: path.join(dir, 'missing.env') }), `--config ${path.join(dir, 'missing.env')}: no such file or directory`);
  t.match(problems({ configFile: dir }), 'is a directory, not a file');
  const broken = write(dir, 'broken.json', '{"GOTRUE_JWT_EXP": ');
  t.match(problems({ configFile: broken }), `--config ${broken}: not valid JSON`);
  const list = write(dir, 'list.json', '["GOTRUE_JWT_EXP"]');
  t.match(problems({ configFile: list }), 'must be a JSON object of variable names and values');
  const nested = write(dir, 'nested.json', '{"GOTRUE_EXTERNAL": {"GITHUB": true}}');
  t.match(problems({ configFile: nested }), 'GOTRUE_EXTERNAL must be a string, number or boolean');
  const bad = write(dir, 'bad.env', 'GOTRUE_JWT_EXP=soon\n');
  t.match(problems({ configFile: bad }), `GOTRUE_JWT_EXP (${bad}): "soon" is not a whole number`, 'values are checked as any other');

  const confDir = path.join(dir, 'auth.d');
  mkdirSync(confDir);
  write(confDir, '10_ok.env', 'GOTRUE_JWT_EXP=10\n');
  const brokenInDir = write(confDir, '20_broken.json', '{');
  t.match(problems({ configDir: confDir }), `--config-dir ${brokenInDir}: not valid JSON`);
  const missingDir = loadConfig({ env: { ...PROD, AUTH_SITE_URL: 'http://x.example' }, envFile: null, configDir: path.join(dir, 'none') });
  t.match(
    missingDir.warnings,
    [`--config-dir ${path.join(dir, 'none')} does not exist (yet): starting without it`],
    'a missing directory only warns at start',
  );
});

// The original's dotenv rules (docs/settings.md#dotenv-syntax): each text with the variables it gives, or
// the start of the error it stops the file with. The cases of the original's parser tests, and the ones
// where the npm `dotenv` parser read something else (a secret cut at `#`, escapes kept, backticks).
const DOTENV_CASES: Array<[string, Record<string, string> | string]> = [
  ['GOTRUE_JWT_SECRET=Xk9#q2Lm8vB4nR7tY1wE5uI3oP6aS0dF', { GOTRUE_JWT_SECRET: 'Xk9#q2Lm8vB4nR7tY1wE5uI3oP6aS0dF' }],
  ['GOTRUE_SMTP_PASS=pa#ss', { GOTRUE_SMTP_PASS: 'pa#ss' }],
  ['FOO=#bar', { FOO: '#bar' }],
  ['FOO= #bar', { FOO: '#bar' }],
  ['GOTRUE_JWT_KEYS="[{\\"kty\\":\\"oct\\"}]"', { GOTRUE_JWT_KEYS: '[{"kty":"oct"}]' }],
  ['FOO="a\\\\b"', { FOO: 'a\\b' }],
  ['FOO="x\\ y"', { FOO: 'x y' }],
  ['FOO=\\$bar', { FOO: '$bar' }],
  ['FOO="a\\$b"', { FOO: 'a$b' }],
  ["FOO='a\\$b'", { FOO: 'a\\$b' }],
  ['FOO=$BAR ${BAZ}', { FOO: '$BAR ${BAZ}' }],
  ['FOO=`x`', { FOO: '`x`' }],
  ['FOO="unclosed', 'line 1: the value of FOO opens a " quote that is never closed'],
  ["A=1\nFOO='unclosed\n", "line 2: the value of FOO opens a ' quote that is never closed"],
  ['INVALID LINE\nfoo=bar', 'line 1: a line break (no = after the name) cannot be part of a variable name'],
  ['FOO-BAR=1', 'line 1: "-" cannot be part of a variable name'],
  ['ONE=1\nTWO=\'2\'\nTHREE = "3"', { ONE: '1', TWO: '2', THREE: '3' }],
  ['URLS="a:3333\nb:443"', { URLS: 'a:3333\nb:443' }],
  [
    '# Full line comment\nqux=thud # fred # other\nthud=fred#qux # other\nfred=qux#baz # other # more\nfoo=bar # baz\nbar=foo#baz\nbaz="foo"#bar',
    { qux: 'thud # fred', thud: 'fred#qux', fred: 'qux#baz # other', foo: 'bar', bar: 'foo#baz', baz: 'foo' },
  ],
  ["export OPTION_A=2\nexport OPTION_B='\\n'", { OPTION_A: '2', OPTION_B: '\\n' }],
  [
    'OPTION_A=1\nOPTION_C= 3\nOPTION_D =4\nOPTION_E = 5\nOPTION_F = \nOPTION_G=\nOPTION_H=1 2',
    { OPTION_A: '1', OPTION_C: '3', OPTION_D: '4', OPTION_E: '5', OPTION_F: '', OPTION_G: '', OPTION_H: '1 2' },
  ],
  [
    'A=\'\'\nB=\'\\n\'\nC=""\nD="\\n"\nE = "echo \'asd\'"\nK=\'line one\nthis is \\\'quoted\\\'\none more\'\nM="line one\nthis is \\"quoted\\"\none more"',
    {
      A: '',
      B: '\\n',
      C: '',
      D: '\n',
      E: "echo 'asd'",
      K: "line one\nthis is \\'quoted\\'\none more",
      M: 'line one\nthis is "quoted"\none more',
    },
  ],
  ['OPTION_A: Foo=bar\nOPTION_B=1:B', { OPTION_A: 'Foo=bar', OPTION_B: '1:B' }],
  [
    'export exportFoo=2\nexportFOO=3\nexport_FOO =4\nexport.FOO= 5\nexport\tX=6',
    { exportFoo: '2', exportFOO: '3', export_FOO: '4', 'export.FOO': '5', X: '6' },
  ],
  ['FOO="bar\\n\\ b\\az"', { FOO: 'bar\n baz' }],
  ['FOO="bar\\\\\\n\\ b\\az"', { FOO: 'bar\\\n baz' }],
  ['FOO="bar\\\\r\\ b\\az"', { FOO: 'bar\\r baz' }],
  ['FOO="bar#baz#bang" # comment', { FOO: 'bar#baz#bang' }],
  ['="value"', { '': 'value' }],
  ['\r\n \t \t\n\t # comment\n export    A=a\t \t \r\nB=b ', { A: 'a', B: 'b' }],
  ['GOTRUE_JWT_SECRET="secret\n"', { GOTRUE_JWT_SECRET: 'secret\n' }],
];

t.test("dotenv files are read by the original's rules", async (t) => {
  for (const [text, expected] of DOTENV_CASES) {
    let got: Record<string, string> | string;
    try {
      got = parseDotenv(text);
    } catch (err) {
      got = (err as Error).message;
    }
    t.strictSame(got, expected, JSON.stringify(text));
  }
});

t.test('a dotenv file that does not parse stops the start, and a reload; a secret with # is read whole', async (t) => {
  const root = scratch();
  const env = { ...PROD, AUTH_SITE_URL: 'http://x.example' };
  const secret = 'Xk9#q2Lm8vB4nR7tY1wE5uI3oP6aS0dF';
  const file = write(root, 'auth.env', `GOTRUE_JWT_SECRET=${secret}\n`);
  t.equal(loadConfig({ env, envFile: null, configFile: file }).jwt.secret, secret, 'the -c file');
  const dotEnv = write(root, '.env', `GOTRUE_JWT_SECRET=${secret}\n`);
  t.equal(loadConfig({ env: { ...env, AUTH_JWT_SECRET: '' }, envFile: dotEnv }).jwt.secret, secret, '.env');

  const broken = write(root, 'broken.env', 'GOTRUE_SITE_URL="http://unclosed.example\n');
  t.throws(() => loadConfig({ env, envFile: null, configFile: broken }), {
    message: `--config ${broken}: line 1: the value of GOTRUE_SITE_URL opens a " quote that is never closed`,
  });
  t.throws(() => loadConfig({ env, envFile: broken }), { message: `${broken}: line 1` }, 'a broken .env stops the start too');

  const dir = path.join(root, 'auth.d');
  mkdirSync(dir);
  write(dir, '10_auth.env', 'GOTRUE_JWT_EXP=100\n');
  const sources = configSources({ env, envFile: null, configDir: dir });
  t.equal(loadFromSources(sources).jwt.exp, 100);
  const bad = write(dir, '20_bad.env', 'GOTRUE_JWT_EXP 200\n');
  t.throws(
    () => loadFromSources(sources, { reloading: true }),
    { message: `--config-dir ${bad}: line 1: a line break (no = after the name) cannot be part of a variable name` },
    'a reload is refused (the running configuration is kept)',
  );
});

t.test('the flags in every spelling, before or after the command', async (t) => {
  const parse = (...argv: string[]) => parseCommandLine(argv);
  const both = { configFile: 'f.env', configDir: 'd' };
  t.match(parse('serve', '--config', 'f.env', '--config-dir', 'd'), { command: 'serve', args: [], ...both });
  t.match(parse('-c', 'f.env', '-d', 'd', 'serve'), { command: 'serve', args: [], ...both });
  t.match(parse('--config=f.env', 'migrate', '-dd', '--dry-run'), { command: 'migrate', args: ['--dry-run'], ...both });
  t.match(parse('-c=f.env', '--config-dir=d'), { command: undefined, args: [], ...both });
  t.match(parse('serve', '-c'), { message: '-c needs a value' });
  // The original's program names, as an overridden container command passes them to the entrypoint.
  t.match(parse('auth', 'migrate', '--dry-run'), { command: 'migrate', args: ['--dry-run'] });
  t.match(parse('gotrue', '-c', 'f.env', 'serve'), { command: 'serve', args: [], configFile: 'f.env' });
  t.match(parse('-c', 'f.env', 'auth'), { command: undefined, args: [], configFile: 'f.env' });
  t.match(parse('auth', 'admin', 'createuser', 'a@example.com', 'pw'), { command: 'admin', args: ['createuser', 'a@example.com', 'pw'] });
  t.match(parse('admin', 'auth'), { command: 'admin', args: ['auth'] }, 'only in the command position');
});

t.test('the binary: `-c FILE serve` and `serve --config-dir DIR` start with the files, migrate reads them', async (t) => {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  const port = await freePort();
  const root = scratch();
  // Everything the service needs comes from the files: the environment has only PATH.
  const env = testServiceEnv(database.url, port);
  const file = write(
    root,
    'gotrue.env',
    Object.entries(env)
      .map(([k, v]) => `${k}=${v}\n`)
      .join(''),
  );
  const dir = path.join(root, 'auth.d');
  mkdirSync(dir);
  write(dir, '50_signup.json', JSON.stringify({ GOTRUE_DISABLE_SIGNUP: 'true', GOTRUE_EXTERNAL_GITHUB_ENABLED: 'true' }));
  write(
    dir,
    '60_github.env',
    'GOTRUE_EXTERNAL_GITHUB_CLIENT_ID=id\nGOTRUE_EXTERNAL_GITHUB_SECRET=secret\nGOTRUE_EXTERNAL_GITHUB_REDIRECT_URI=http://127.0.0.1/callback\n',
  );

  const migrated = runPortcullis(['migrate', '--config', file], { cwd: root, env: { PATH: process.env.PATH } });
  t.equal(migrated.status, 0, `migrate reads the -c file (${migrated.stderr})`);

  const first = await startBinary(['-c', file, 'serve'], root, port);
  const fromFile = await settings(port);
  t.equal(fromFile.disable_signup, false, '-c before the command');
  t.equal(fromFile.external.github, false);
  await first.stop();

  const second = await startBinary(['serve', '--config', file, '--config-dir', dir], root, port);
  const fromDir = await settings(port);
  t.equal(fromDir.disable_signup, true, 'the directory on top of the -c file');
  t.equal(fromDir.external.github, true, 'across its files');
  await second.stop();
});

t.test('the binary refuses a file it cannot use, naming it', async (t) => {
  const root = scratch();
  const run = (...args: string[]) => runPortcullis(args, { cwd: root, env: { PATH: process.env.PATH } });
  const missing = run('serve', '-c', 'nowhere.env');
  t.equal(missing.status, 1);
  t.match(missing.stderr, 'portcullis: invalid configuration:\n  - --config nowhere.env: no such file or directory');
  const dir = path.join(root, 'auth.d');
  mkdirSync(dir);
  write(dir, '10.json', '{"GOTRUE_SITE_URL": ');
  const broken = run('-d', dir, 'serve');
  t.equal(broken.status, 1);
  t.match(broken.stderr, `--config-dir ${path.join(dir, '10.json')}: not valid JSON`);
  t.notMatch(broken.stderr, /\bat .*\.js:\d+/, 'no stack trace');
  const noValue = run('serve', '--config-dir');
  t.equal(noValue.status, 2);
  t.match(noValue.stderr, '--config-dir needs a value');
});

t.test("the image's health check finds the port in the service's -c file", async (t) => {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  const port = await freePort();
  const root = scratch();
  write(
    root,
    'gotrue.env',
    Object.entries(testServiceEnv(database.url, port))
      .map(([k, v]) => `${k}=${v}\n`)
      .join(''),
  );
  const service = await startBinary(['serve', '-c', 'gotrue.env'], root, port);
  t.teardown(() => service.stop());
  const check = (cwd: string) =>
    new Promise<number | null>((resolve) =>
      spawn(process.execPath, [path.resolve('bin/healthcheck.js')], { cwd, env: { PATH: process.env.PATH }, stdio: 'ignore' }).on(
        'exit',
        resolve,
      ),
    );
  // The port is in the -c file only: without the service's flags the check would ask port 8081.
  t.equal(await check(root), 0, 'beside the service: its flags are read');
});

interface Running {
  child: ChildProcess;
  logs(): Array<Record<string, any>>;
  stop(): Promise<void>;
}

/** Runs the real binary with only PATH in its environment, and waits until it answers /health. */
async function startBinary(args: string[], cwd: string, port: number): Promise<Running> {
  const child = spawn(process.execPath, [bin, ...args], { cwd, env: { PATH: process.env.PATH }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  child.stderr.on('data', (chunk) => (err += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (let i = 0; ; i++) {
    const ok = await fetch(`http://127.0.0.1:${port}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (child.exitCode !== null || i > 300) throw new Error(`the service did not come up: ${err}${out}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    child,
    logs: () =>
      out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l)),
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

async function settings(port: number): Promise<any> {
  return (await fetch(`http://127.0.0.1:${port}/settings`)).json();
}
