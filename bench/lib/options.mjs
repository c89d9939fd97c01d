// The bench's own settings, read once from the environment and the command line. The service under test
// reads its settings (AUTH_*) itself; the ones the bench needs to know (pool sizes) come back from it.
import os from 'node:os';

export const SCENARIOS = [
  'token-password',
  'token-refresh',
  'user',
  'settings',
  'signup',
  'mixed',
  'overload',
  // each on a service of its own (scenarios/variants.mjs)
  'token-refresh-es256',
  'user-es256',
  'token-refresh-hook-http',
  'token-refresh-hook-pg',
];
/** Not in the default run: uv-threadpool restarts the service per threadpool size; crypto-choices needs none;
 * parity runs its own service with a mail server; peer installs better-auth from the npm registry. */
export const EXTRA_SCENARIOS = ['uv-threadpool', 'crypto-choices', 'parity', 'peer'];

export function readOptions(argv = process.argv.slice(2), env = process.env) {
  const wanted = argv.filter((a) => !a.startsWith('-'));
  const unknown = wanted.filter((name) => !SCENARIOS.includes(name) && !EXTRA_SCENARIOS.includes(name));
  if (unknown.length > 0) {
    throw new Error(`unknown scenario ${unknown.join(', ')}; choose from ${[...SCENARIOS, ...EXTRA_SCENARIOS].join(', ')}`);
  }
  const positive = (name, fallback) => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!(value > 0)) throw new Error(`${name} must be a positive number, got "${raw}"`);
    return value;
  };
  return {
    scenarios: wanted.length > 0 ? wanted : SCENARIOS,
    /** seconds per measured phase (a scenario's load and its limit are one phase each) */
    duration: positive('BENCH_DURATION', 5),
    /** confirmed users seeded for the password grant */
    users: Math.round(positive('BENCH_USERS', 1000)),
    databaseUrl: env.BENCH_DATABASE_URL || null,
    resultsDir: env.BENCH_RESULTS_DIR || new URL('../results/', import.meta.url).pathname,
    logLevel: env.BENCH_LOG_LEVEL || 'info',
    /** the default threadpool of the service process: libuv's own (4) unless the operator sets one */
    uvThreadpool: env.UV_THREADPOOL_SIZE || '',
    /** a progress line on stderr: on a terminal, or anywhere with BENCH_PROGRESS=1 (a CI log, say) */
    progress: (process.stderr.isTTY || env.BENCH_PROGRESS === '1') && !env.BENCH_QUIET,
    cpus: os.availableParallelism(),
  };
}
