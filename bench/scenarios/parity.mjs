// Timing parity: does an endpoint that takes an address answer a known address and an unknown one after
// the same time? For each endpoint, requests for the two (or three) variants are interleaved one by one
// and the median of each is printed; the target is a median difference under 2 ms. Its own service, with
// mail going to a local SMTP server that answers after a relay-like delay. Not in the default run:
// `npm run bench -- parity` (about 4 × BENCH_DURATION × 20 requests per variant).
import { SMTPServer } from 'smtp-server';
import { startBenchService, freePort } from '../lib/service.mjs';
import { seedUsers, userEmail, PASSWORD } from '../lib/seed.mjs';
import { round } from '../lib/load.mjs';

const TARGET_MS = 2;
/** A mail relay on the same network answers in a few milliseconds. */
const SMTP_DELAY_MS = 5;

export async function parity(options) {
  const smtp = await startSlowSmtp(SMTP_DELAY_MS);
  const service = await startBenchService(options, {
    env: {
      AUTH_MAILER_AUTOCONFIRM: 'false',
      AUTH_SMTP_HOST: '127.0.0.1',
      AUTH_SMTP_PORT: String(smtp.port),
      AUTH_SMTP_ADMIN_EMAIL: 'bench@example.com',
      AUTH_RATE_LIMIT_EMAIL_SENT: '100000000',
    },
  });
  try {
    const users = 50;
    await seedUsers(service, users);
    await service.db.query(`update users set banned_until = now() + interval '1 day' where email = $1`, [userEmail(users - 1)]);
    const rounds = Math.max(10, Math.round(options.duration * 20));
    const post = (path, body) => () => timed(service.url + path, body);
    let fresh = 0;
    const unknown = () => `parity-unknown-${options.runId ?? ''}${fresh++}@example.com`;
    const known = (i) => userEmail(i % (users - 1));
    // Sends to one user are spaced by the per-user interval; the bench lifts it between requests, outside the timing.
    const allowSends = () =>
      service.db.query('update users set recovery_sent_at = null, confirmation_sent_at = null where email like $1', ['bench-user-%']);
    const pending = [];
    for (let i = 0; i < 10; i++) {
      const email = `parity-pending-${i}@example.com`;
      await timed(`${service.url}/signup`, { email, password: PASSWORD });
      pending.push(email);
    }
    const allowPending = () => service.db.query(`update users set confirmation_sent_at = null where email like 'parity-pending-%'`);

    const endpoints = {
      'password grant': {
        known: (i) => post('/token?grant_type=password', { email: known(i), password: 'wrong-password' })(),
        unknown: () => post('/token?grant_type=password', { email: unknown(), password: 'wrong-password' })(),
        banned: () => post('/token?grant_type=password', { email: userEmail(users - 1), password: 'wrong-password' })(),
      },
      recover: {
        known: async (i) => (await allowSends(), post('/recover', { email: known(i) })()),
        unknown: async () => (await allowSends(), post('/recover', { email: unknown() })()),
      },
      magiclink: {
        known: async (i) => (await allowSends(), post('/magiclink', { email: known(i) })()),
        unknown: async () => (await allowSends(), post('/magiclink', { email: unknown() })()),
      },
      otp: {
        known: async (i) => (await allowSends(), post('/otp', { email: known(i) })()),
        unknown: async () => (await allowSends(), post('/otp', { email: unknown() })()),
      },
      signup: {
        new: () => post('/signup', { email: unknown(), password: PASSWORD })(),
        existing: (i) => post('/signup', { email: known(i), password: PASSWORD })(),
      },
      'resend signup': {
        pending: async (i) => (await allowPending(), post('/resend', { type: 'signup', email: pending[i % pending.length] })()),
        unknown: async () => (await allowPending(), post('/resend', { type: 'signup', email: unknown() })()),
      },
    };

    const measured = {};
    for (const [endpoint, variants] of Object.entries(endpoints)) {
      const samples = Object.fromEntries(Object.keys(variants).map((v) => [v, []]));
      const statuses = {};
      for (let i = 0; i < rounds; i++) {
        for (const [variant, request] of Object.entries(variants)) {
          const { ms, status } = await request(i);
          samples[variant].push(ms);
          statuses[`${variant} ${status}`] = (statuses[`${variant} ${status}`] ?? 0) + 1;
        }
      }
      const medians = Object.fromEntries(Object.entries(samples).map(([v, xs]) => [v, round(median(xs), 2)]));
      const values = Object.values(medians);
      const spread = round(Math.max(...values) - Math.min(...values), 2);
      measured[endpoint] = { medians, spread, target: TARGET_MS, meetsTarget: spread < TARGET_MS, rounds, statuses };
      const list = Object.entries(medians)
        .map(([v, m]) => `${v} ${m} ms`)
        .join(', ');
      console.log(
        `  parity          ${endpoint.padEnd(15)} medians: ${list}; spread ${spread} ms (< ${TARGET_MS}${spread < TARGET_MS ? ' ok' : ' MISSED'})`,
      );
    }
    return { measured };
  } finally {
    await service.stop();
    await smtp.close();
  }
}

async function timed(url, body) {
  const started = performance.now();
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await res.arrayBuffer();
  return { ms: performance.now() - started, status: res.status };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

async function startSlowSmtp(delayMs) {
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, _session, callback) {
      stream.on('data', () => {});
      stream.on('end', () => setTimeout(callback, delayMs));
    },
  });
  const port = await freePort();
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { port, close: () => new Promise((resolve) => server.close(resolve)) };
}
