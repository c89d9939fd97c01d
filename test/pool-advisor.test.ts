// The pool advisor (DB_ADVISOR_*, docs/observability.md#pool-advice): the original's rule over a window of
// samples, a real pool whose callers queue, and the service's log line.
import t from 'tap';
import { createSampleJudge } from '../dist/db/pool-advisor.js';
import { createPool } from '../dist/db/pool.js';
import { createTestDatabase } from './helpers/db.js';
import { startTestService } from './helpers/server.js';
import { signUp } from './helpers/accounts.js';

/** Polls `check` until it holds (bounded: a failing test must not hang). */
async function until(what: string, check: () => boolean, tries = 400): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`gave up waiting for ${what}`);
}

t.test('a window of samples advises once a third of it is long or crowded, and not before it is full', async (t) => {
  // 100 ms samples over 900 ms: nine samples, three of which are a third.
  const quiet = createSampleJudge(100, 900);
  for (let i = 0; i < 20; i++) t.equal(quiet(99, 2), null, 'waits adding up to less than the interval, two callers queued');

  const long = createSampleJudge(100, 900);
  const longVerdicts = [long(100, 1), long(250, 1), long(100, 1), ...Array.from({ length: 5 }, () => long(0, 0))];
  t.strictSame(longVerdicts, Array(8).fill(null), 'three long samples, but the window is not full yet');
  t.strictSame(long(0, 0), { longWaitDurationSamples: 3, over2WaitingSamples: 0 }, 'the window full: a third of it is long');
  for (let i = 0; i < 8; i++) long(0, 0);
  t.equal(long(0, 0), null, 'the long samples have left the window');

  const crowded = createSampleJudge(100, 900);
  for (let i = 0; i < 6; i++) crowded(0, 0);
  crowded(10, 3);
  t.equal(crowded(10, 3), null, 'two crowded samples, and the window is not full yet');
  t.strictSame(crowded(50, 3), { longWaitDurationSamples: 0, over2WaitingSamples: 3 }, 'the window full: a third of it is crowded');
});

t.test('a window of one or two samples needs one bad sample, not none', async (t) => {
  const one = createSampleJudge(200, 200);
  t.equal(one(0, 0), null);
  t.strictSame(one(0, 3), { longWaitDurationSamples: 0, over2WaitingSamples: 1 });
  const two = createSampleJudge(200, 400);
  t.equal(two(0, 0), null);
  t.equal(two(0, 0), null, 'two quiet samples advise nothing (the original divides by three and asks for none)');
  t.strictSame(two(200, 0), { longWaitDurationSamples: 1, over2WaitingSamples: 0 });
  // A millisecond's samples over a billion: the window is cut to 100 000 samples, not allocated whole.
  const huge = createSampleJudge(1, 1e9);
  let verdict = null;
  for (let i = 0; i < 100_000; i++) verdict = huge(0, 3);
  t.strictSame(verdict, { longWaitDurationSamples: 0, over2WaitingSamples: 100_000 }, 'judged once 100 000 samples are in');
});

t.test('a pool whose callers keep queuing is advised to grow, once', async (t) => {
  const db = await createTestDatabase();
  t.teardown(() => db.drop());
  const advice: unknown[] = [];
  const pool = createPool({
    url: db.url,
    max: 1,
    namespace: 'public',
    advisor: { samplingMs: 20, observationMs: 200, advise: (a) => advice.push(a) },
  });
  t.teardown(() => pool.end());
  let running = true;
  const caller = async () => {
    while (running) await pool.query('select pg_sleep(0.005)');
  };
  const callers = Array.from({ length: 4 }, caller);
  try {
    await until('the advice', () => advice.length > 0);
    // Another whole window of the same load: the advice is not repeated within the hour.
    const seen = advice.length;
    await new Promise((resolve) => setTimeout(resolve, 600));
    t.equal(advice.length, seen, 'not repeated');
  } finally {
    running = false;
    await Promise.all(callers);
  }
  t.equal(advice.length, 1);
  t.match(advice[0], { longWaitDurationSamples: Number });
  t.ok((advice[0] as { longWaitDurationSamples: number }).longWaitDurationSamples >= 3, 'a third of the ten samples were long');
});

t.test('the service logs the advice as the original does when its pool is too small for its load', async (t) => {
  const api = await startTestService({
    AUTH_MAILER_AUTOCONFIRM: 'true',
    AUTH_HTTP_WORKERS: '1',
    AUTH_DB_MAX_POOL_SIZE: '1',
    AUTH_DB_ADVISOR_SAMPLING_INTERVAL: '20ms',
    AUTH_DB_ADVISOR_OBSERVATION_INTERVAL: '200ms',
  });
  t.teardown(() => api.stop());
  const { access_token: token } = await signUp(api);
  const advised = () => api.logs().find((line) => line.component === 'db.advisor');
  let running = true;
  const client = async () => {
    while (running) {
      const reply = await api.request('GET', '/user', { token });
      if (reply.status !== 200) throw new Error(`GET /user answered ${reply.status}`);
    }
  };
  const clients = Array.from({ length: 8 }, client);
  try {
    await until('the advice in the log', () => advised() !== undefined);
  } finally {
    running = false;
    await Promise.all(clients);
  }
  t.match(advised(), {
    level: 'warning',
    msg: 'Suboptimal database connection pool settings detected! Consider doubling the max DB pool size configuration',
    long_wait_duration_samples: Number,
    over_2_waiting_samples: Number,
  });
});
