// The services Portcullis calls out to, misbehaving for real: a local server that accepts the connection and
// never answers, sends headers and stalls the body, dribbles a byte a second, answers without end, answers
// garbage, or drops the connection. Each request that needs it must end with the original's error (never a
// 500 nor a hang), and while 20 of them are stuck on it the rest of the service must keep answering: no
// pooled connection, transaction or thread may be held for the stall beyond the bounds the architecture
// allows (docs/architecture.md#bounded-queues). Outcomes are asserted while the stall holds; the test ends
// the stall itself afterwards, so no assertion depends on how long anything takes.
import t, { type Test } from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestService, type Reply, type TestService } from './helpers/server.js';
import { newHookSecret } from './helpers/hook-server.js';
import { uniqueEmail } from './helpers/accounts.js';
import { PASSWORD, adminCreatedUser } from './helpers/users.js';

// ---------------------------------------------------------------------------------------------------------
// The misbehaving server

type Behaviour =
  /** read the request, never answer */
  | { kind: 'hang' }
  /** send the status and headers, then a body that never ends */
  | { kind: 'headers'; contentType?: string }
  /** send the headers, then one byte a second for ever */
  | { kind: 'dribble'; contentType?: string }
  /** `bytes` of JSON-looking text, chunked, with no Content-Length */
  | { kind: 'huge'; bytes: number; contentType?: string }
  /** close the connection without a word */
  | { kind: 'reset' }
  | { kind: 'answer'; status?: number; headers?: Record<string, string>; body?: unknown };

interface FaultRequest {
  method: string;
  path: string;
  body: string;
}

interface FaultServer {
  url: string;
  /** how the server answers each request from now on */
  behave(choose: (req: FaultRequest) => Behaviour): void;
  /** requests whose answer is being withheld right now */
  readonly held: number;
  requests: FaultRequest[];
  /** ends every withheld answer by closing its connection */
  release(): void;
  close(): Promise<void>;
}

async function startFaultServer(): Promise<FaultServer> {
  let choose: (req: FaultRequest) => Behaviour = () => ({ kind: 'answer', status: 404 });
  const held = new Set<http.ServerResponse>();
  const timers = new Set<NodeJS.Timeout>();
  const requests: FaultRequest[] = [];
  const withhold = (res: http.ServerResponse) => {
    held.add(res);
    res.on('close', () => held.delete(res));
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request = { method: req.method ?? 'GET', path: (req.url ?? '/').split('?')[0], body: Buffer.concat(chunks).toString() };
      requests.push(request);
      const b = choose(request);
      switch (b.kind) {
        case 'hang':
          return withhold(res);
        case 'headers':
          res.writeHead(200, { 'content-type': b.contentType ?? 'application/json' });
          res.write('{"');
          return withhold(res);
        case 'dribble': {
          res.writeHead(200, { 'content-type': b.contentType ?? 'application/json' });
          withhold(res);
          const timer = setInterval(() => res.write(' '), 1000);
          timers.add(timer);
          res.on('close', () => clearInterval(timer));
          return;
        }
        case 'huge': {
          res.writeHead(200, { 'content-type': b.contentType ?? 'application/json' });
          const piece = Buffer.from('x'.repeat(64 * 1024));
          let sent = 0;
          res.write('{"padding":"');
          const more = () => {
            while (sent < b.bytes && !res.destroyed) {
              sent += piece.length;
              if (!res.write(piece)) return void res.once('drain', more);
            }
            if (!res.destroyed) res.end('"}');
          };
          res.on('error', () => undefined);
          return more();
        }
        case 'reset':
          return req.socket.destroy();
        case 'answer': {
          const body = b.body === undefined ? '' : typeof b.body === 'string' ? b.body : JSON.stringify(b.body);
          const type = typeof b.body === 'string' || b.body === undefined ? {} : { 'content-type': 'application/json' };
          res.writeHead(b.status ?? 200, { ...type, ...b.headers });
          return void res.end(body);
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const release = () => {
    for (const res of held) res.destroy();
    held.clear();
  };
  return {
    url: `http://127.0.0.1:${port}`,
    behave: (c) => (choose = c),
    get held() {
      return held.size;
    },
    requests,
    release,
    close: () =>
      new Promise<void>((resolve) => {
        release();
        for (const timer of timers) clearInterval(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ---------------------------------------------------------------------------------------------------------
// Helpers

/** Resolves once `check` holds, polled on the event loop (an observable state, not a sleep of a guessed length). */
async function until(check: () => boolean, stop: () => boolean = () => false): Promise<void> {
  while (!check() && !stop()) await new Promise((resolve) => setTimeout(resolve, 10));
}

const STUCK = 20;

async function idleInTransaction(api: TestService): Promise<number> {
  const { rows } = await api.db.query(
    "select count(*)::int as n from pg_stat_activity where state = 'idle in transaction' and datname = current_database()",
  );
  return rows[0].n;
}

/** A confirmed user with a password, made through the admin API (no hook on the way). */
const confirmedUser = (api: TestService, email = uniqueEmail('outbound')) => adminCreatedUser(api, email);

const passwordGrant = (api: TestService, email: string) =>
  api.request('POST', '/token?grant_type=password', { body: { email, password: PASSWORD } });

/** Tracks requests in flight: how many have answered, so a wait can stop when they all did. */
function inFlight(requests: Array<Promise<Reply>>) {
  let answered = 0;
  const all = Promise.all(requests.map((r) => r.finally(() => answered++)));
  return {
    all,
    get answered() {
      return answered;
    },
  };
}

/** The slots (2 of a pool of 6) reached the stalled dependency and the rest were refused: the slots held. */
async function slotsHoldTheStall(t: Test, fault: FaultServer, stuck: ReturnType<typeof inFlight>, what: string): Promise<void> {
  await until(
    () => fault.held >= 2,
    () => stuck.answered > 0,
  );
  await until(
    () => fault.held > 2,
    () => stuck.answered === STUCK - 2,
  );
  t.equal(fault.held, 2, what);
}

/** Each request stuck behind the slots ends refused with Retry-After, timed out by the hook's limit, or done. */
function endedRefusedTimedOutOrDone(t: Test, replies: Reply[], what: string): void {
  for (const res of replies) {
    t.ok(
      res.status === 200 ||
        (res.status === 503 && res.body.error_code === 'database_busy' && res.headers.get('retry-after')) ||
        (res.status === 422 && /^hook_timeout/.test(res.body.error_code)),
      `${what}: ${res.status} ${res.text.slice(0, 120)}`,
    );
  }
}

/**
 * Whether the stall still held when the checks above ran. A dependency's own time limit (the hooks' 5 s) can
 * end it first on a loaded machine: then the checks proved less, which is noted, not failed, as timing never
 * decides a test.
 */
function stallHeldThrough(t: Test, answered: number, what: string): void {
  if (answered === 0) t.pass(what);
  else
    t.comment(
      `${what}: no, ${answered} stuck request(s) ended first (their dependency's time limit); the checks ran partly after the stall`,
    );
}

/**
 * What must hold while requests are stuck on a stalled dependency: the unrelated routes answer, and at most
 * `maxIdleInTransaction` sessions sit idle in a transaction (0 where the dependency is asked holding none).
 */
async function serviceKeepsAnswering(
  t: Test,
  api: TestService,
  bearer: string,
  signInEmail: string | null,
  maxIdleInTransaction: number,
): Promise<void> {
  const settings = await api.request('GET', '/settings');
  t.equal(settings.status, 200, `GET /settings answers during the stall: ${settings.text.slice(0, 120)}`);
  const me = await api.request('GET', '/user', { token: bearer });
  t.equal(me.status, 200, `GET /user answers during the stall: ${me.text.slice(0, 120)}`);
  if (signInEmail) {
    const signedIn = await passwordGrant(api, signInEmail);
    t.equal(signedIn.status, 200, `a password sign-in succeeds during the stall: ${signedIn.text.slice(0, 120)}`);
  }
  const idle = await idleInTransaction(api);
  t.ok(idle <= maxIdleInTransaction, `at most ${maxIdleInTransaction} session(s) idle in transaction during the stall (${idle})`);
}

// ---------------------------------------------------------------------------------------------------------
// HTTP hooks

t.test('HTTP hooks', async (t) => {
  const fault = await startFaultServer();
  const secret = newHookSecret();
  const hook = (name: string, path: string) => ({
    [`AUTH_HOOK_${name}_ENABLED`]: 'true',
    [`AUTH_HOOK_${name}_URI`]: `${fault.url}${path}`,
    [`AUTH_HOOK_${name}_SECRETS`]: secret,
  });
  // A pool of 6 on one thread: 2 sending slots and 2 hook slots, so at most 4 of its connections are in
  // transactions that wait on the network, and 2 stay with the rest of the API.
  const api = await startTestService({
    AUTH_DB_MAX_POOL_SIZE: '6',
    AUTH_HTTP_WORKERS: '1',
    AUTH_DB_ACQUIRE_TIMEOUT: '2',
    AUTH_EXTERNAL_PHONE_ENABLED: 'true',
    AUTH_SMS_PROVIDER: 'twilio',
    AUTH_SMS_TWILIO_ACCOUNT_SID: 'AC123',
    AUTH_SMS_TWILIO_AUTH_TOKEN: 'tok',
    AUTH_SMS_TWILIO_MESSAGE_SERVICE_SID: 'MG1',
    AUTH_RATE_LIMIT_SMS_SENT: '1000',
    AUTH_RATE_LIMIT_OTP: '1000',
    AUTH_RATE_LIMIT_TOKEN_REFRESH: '10000',
    AUTH_RATE_LIMIT_VERIFY: '10000',
    ...hook('PASSWORD_VERIFICATION_ATTEMPT', '/password-verification-attempt'),
    ...hook('SEND_SMS', '/send-sms'),
    ...hook('CUSTOM_ACCESS_TOKEN', '/custom-access-token'),
  });
  t.teardown(async () => {
    await api.stop();
    await fault.close();
  });
  // Well-behaved unless a test says otherwise.
  const normal = (req: FaultRequest): Behaviour => {
    if (req.path === '/password-verification-attempt') return { kind: 'answer', body: { decision: 'continue' } };
    if (req.path === '/custom-access-token')
      return { kind: 'answer', body: { claims: (JSON.parse(req.body) as { claims: unknown }).claims } };
    return { kind: 'answer', body: {} };
  };
  fault.behave(normal);

  const bystander = await confirmedUser(api);
  const bearer = (await passwordGrant(api, bystander.email)).body.access_token as string;
  t.ok(bearer, 'a session to call GET /user with');

  t.test('a stalled password verification attempt hook is waited on holding no connection', async (t) => {
    const users = await Promise.all(Array.from({ length: STUCK }, () => confirmedUser(api)));
    fault.behave((req) => (req.path === '/password-verification-attempt' ? { kind: 'hang' } : normal(req)));
    const stuck = inFlight(users.map((u) => passwordGrant(api, u.email)));
    await until(
      () => fault.held === STUCK,
      () => stuck.answered > 0,
    );
    t.equal(fault.held, STUCK, 'every sign-in reached the hook');
    await serviceKeepsAnswering(t, api, bearer, null, 0);
    stallHeldThrough(t, stuck.answered, 'the stall still held while the service answered');
    fault.behave(normal);
    fault.release();
    for (const res of await stuck.all) {
      // The dropped connection is tried again after a pause; whether the retry fits in the hook's 5 s is
      // the clock's business, so both endings are the original's.
      t.ok(
        res.status === 200 || (res.status === 422 && res.body.error_code === 'hook_timeout'),
        `a stuck sign-in ends as the original's: ${res.status} ${res.text.slice(0, 120)}`,
      );
    }
  });

  // A sign-in's transaction waits on the hook signing its session holding its connection: such transactions
  // take hook slots (sessions/issue.ts issuingTx), apart from the sending slots.

  t.test('a stalled custom access token hook holds at most the hook slots in sign-in transactions', async (t) => {
    const users = await Promise.all(Array.from({ length: STUCK }, () => confirmedUser(api)));
    fault.behave((req) => (req.path === '/custom-access-token' ? { kind: 'hang' } : normal(req)));
    const stuck = inFlight(users.map((u) => passwordGrant(api, u.email)));
    await slotsHoldTheStall(t, fault, stuck, 'no more sign-ins than the hook slots wait on the hook inside a transaction');
    await serviceKeepsAnswering(t, api, bearer, null, 2);
    fault.behave(normal);
    fault.release();
    endedRefusedTimedOutOrDone(t, await stuck.all, 'a stuck sign-in ends as refused, timed out or signed in');
  });

  t.test('a stalled custom access token hook holds at most the hook slots in refresh transactions', async (t) => {
    const users = await Promise.all(Array.from({ length: STUCK }, () => confirmedUser(api)));
    const sessions = await Promise.all(users.map((u) => passwordGrant(api, u.email)));
    fault.behave((req) => (req.path === '/custom-access-token' ? { kind: 'hang' } : normal(req)));
    const stuck = inFlight(
      sessions.map((s) => api.request('POST', '/token?grant_type=refresh_token', { body: { refresh_token: s.body.refresh_token } })),
    );
    await slotsHoldTheStall(t, fault, stuck, 'no more refreshes than the hook slots wait on the hook inside a transaction');
    await serviceKeepsAnswering(t, api, bearer, null, 2);
    fault.behave(normal);
    fault.release();
    endedRefusedTimedOutOrDone(t, await stuck.all, 'a stuck refresh ends as refused, timed out or answered');
  });

  t.test('a stalled send-SMS hook holds at most the sending slots', async (t) => {
    fault.behave((req) => (req.path === '/send-sms' ? { kind: 'hang' } : normal(req)));
    const phones = Array.from({ length: STUCK }, (_, i) => `1555010${String(1000 + i)}`);
    const stuck = inFlight(phones.map((phone) => api.request('POST', '/otp', { body: { phone } })));
    await slotsHoldTheStall(t, fault, stuck, 'only the sending slots reached the hook');
    await serviceKeepsAnswering(t, api, bearer, bystander.email, 2);
    fault.behave(normal);
    fault.release();
    endedRefusedTimedOutOrDone(t, await stuck.all, 'a stuck send ends as refused, timed out or sent');
  });

  t.test('a stalled send-SMS hook and a stalled custom access token hook together leave GET /user a connection', async (t) => {
    // Each set of slots is half the pool but one, so both full still leave 2 of the 6 connections.
    const users = await Promise.all(Array.from({ length: STUCK }, () => confirmedUser(api)));
    const sessions = await Promise.all(users.map((u) => passwordGrant(api, u.email)));
    fault.behave((req) => (req.path === '/send-sms' || req.path === '/custom-access-token' ? { kind: 'hang' } : normal(req)));
    const phones = Array.from({ length: STUCK }, (_, i) => `1555030${String(1000 + i)}`);
    const stuck = inFlight([
      ...phones.map((phone) => api.request('POST', '/otp', { body: { phone } })),
      ...sessions.map((s) => api.request('POST', '/token?grant_type=refresh_token', { body: { refresh_token: s.body.refresh_token } })),
    ]);
    await until(
      () => fault.held >= 4,
      () => stuck.answered > 0,
    );
    await until(
      () => fault.held > 4,
      () => stuck.answered === 2 * STUCK - 4,
    );
    t.equal(fault.held, 4, 'the sending slots and the hook slots, no more, reached the stalled hooks');
    await serviceKeepsAnswering(t, api, bearer, null, 4);
    fault.behave(normal);
    fault.release();
    endedRefusedTimedOutOrDone(t, await stuck.all, 'a stuck send or refresh ends as refused, timed out or answered');
  });

  t.test('garbage from a hook is refused with the original errors', async (t) => {
    const cases: Array<[string, Behaviour, number, string]> = [
      ['headers, then a body that never ends', { kind: 'headers' }, 422, 'hook_timeout'],
      ['one byte a second', { kind: 'dribble' }, 422, 'hook_timeout'],
      ['16 MiB chunked with no length', { kind: 'huge', bytes: 16 * 1024 * 1024 }, 422, 'hook_payload_over_size_limit'],
      [
        'JSON that does not parse',
        { kind: 'answer', headers: { 'content-type': 'application/json' }, body: '{"decision":' },
        500,
        'unexpected_failure',
      ],
      [
        'HTML',
        { kind: 'answer', headers: { 'content-type': 'text/html' }, body: '<html></html>' },
        400,
        'hook_payload_invalid_content_type',
      ],
      [
        'a redirect to itself',
        { kind: 'answer', status: 302, headers: { location: '/password-verification-attempt' } },
        500,
        'unexpected_failure',
      ],
      ['a 500', { kind: 'answer', status: 500, body: 'boom' }, 500, 'unexpected_failure'],
      ['the connection dropped, every time', { kind: 'reset' }, 422, 'hook_timeout_after_retry'],
    ];
    // One user per case, each with its own behaviour: the cases run at once (two of them take the hook's 5 s).
    const byUser = new Map<string, Behaviour>();
    const users = await Promise.all(cases.map(() => confirmedUser(api)));
    cases.forEach(([, behaviour], i) => byUser.set(users[i].id, behaviour));
    fault.behave((req) => {
      if (req.path !== '/password-verification-attempt') return normal(req);
      const userId = (JSON.parse(req.body) as { user_id: string }).user_id;
      return byUser.get(userId) ?? normal(req);
    });
    t.teardown(() => fault.behave(normal));
    const answers = await Promise.all(users.map((u) => passwordGrant(api, u.email)));
    cases.forEach(([what, , status, code], i) => {
      t.same([answers[i].status, answers[i].body.error_code], [status, code], `${what}: ${answers[i].text.slice(0, 120)}`);
    });
    const me = await api.request('GET', '/user', { token: bearer });
    t.equal(me.status, 200, 'the thread that read the garbage still answers');
  });
});

t.test('a stalled before-user-created hook holds at most the hook slots in anonymous sign-ins', async (t) => {
  // Only this hook on: the anonymous sign-in's transaction waits on it, and signs its session locally.
  const fault = await startFaultServer();
  const api = await startTestService({
    AUTH_DB_MAX_POOL_SIZE: '6',
    AUTH_HTTP_WORKERS: '1',
    AUTH_DB_ACQUIRE_TIMEOUT: '2',
    AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
    AUTH_RATE_LIMIT_ANONYMOUS_USERS: '1000',
    AUTH_HOOK_BEFORE_USER_CREATED_ENABLED: 'true',
    AUTH_HOOK_BEFORE_USER_CREATED_URI: `${fault.url}/before-user-created`,
    AUTH_HOOK_BEFORE_USER_CREATED_SECRETS: newHookSecret(),
  });
  t.teardown(async () => {
    await api.stop();
    await fault.close();
  });
  const user = await confirmedUser(api);
  const bearer = (await passwordGrant(api, user.email)).body.access_token as string;
  fault.behave(() => ({ kind: 'hang' }));
  const stuck = inFlight(Array.from({ length: STUCK }, () => api.request('POST', '/signup', { body: {} })));
  await slotsHoldTheStall(t, fault, stuck, 'no more anonymous sign-ins than the hook slots wait on the hook inside a transaction');
  await serviceKeepsAnswering(t, api, bearer, user.email, 2);
  fault.behave(() => ({ kind: 'answer', body: {} }));
  fault.release();
  endedRefusedTimedOutOrDone(t, await stuck.all, 'a stuck anonymous sign-in ends as refused, timed out or signed in');
  const { rows } = await api.db.query('select count(*)::int as n from auth.users where is_anonymous');
  t.equal(
    rows[0].n,
    (await stuck.all).filter((res) => res.status === 200).length,
    'a user for each anonymous sign-in that answered 200, and no other',
  );
});

// ---------------------------------------------------------------------------------------------------------
// SMS gateway (Twilio Verify: it sends its own code, and checks it when asked)

t.test('SMS gateway', async (t) => {
  const fault = await startFaultServer();
  const api = await startTestService({
    AUTH_DB_MAX_POOL_SIZE: '6',
    AUTH_HTTP_WORKERS: '1',
    AUTH_DB_ACQUIRE_TIMEOUT: '2',
    // Longer than the test: only the test ends a stall.
    AUTH_SEND_TIMEOUT: '60',
    AUTH_INTERNAL_HTTP_TIMEOUT: '60',
    AUTH_API_MAX_REQUEST_DURATION: '90',
    AUTH_DB_IDLE_IN_TRANSACTION_TIMEOUT: '90',
    AUTH_EXTERNAL_PHONE_ENABLED: 'true',
    AUTH_SMS_PROVIDER: 'twilio_verify',
    AUTH_SMS_TWILIO_VERIFY_API_BASE_URL: fault.url,
    AUTH_SMS_TWILIO_VERIFY_ACCOUNT_SID: 'AC123',
    AUTH_SMS_TWILIO_VERIFY_AUTH_TOKEN: 'tok',
    AUTH_SMS_TWILIO_VERIFY_MESSAGE_SERVICE_SID: 'VA123',
    AUTH_RATE_LIMIT_SMS_SENT: '1000',
    AUTH_RATE_LIMIT_OTP: '1000',
    AUTH_RATE_LIMIT_VERIFY: '10000',
  });
  t.teardown(async () => {
    await api.stop();
    await fault.close();
  });
  const sent = (): Behaviour => ({ kind: 'answer', status: 201, body: { sid: 'VE1', status: 'pending' } });
  const normal = (req: FaultRequest): Behaviour =>
    req.path.endsWith('/Verifications') ? sent() : { kind: 'answer', body: { status: 'pending', valid: false } };
  fault.behave(normal);
  const bystander = await confirmedUser(api);
  const bearer = (await passwordGrant(api, bystander.email)).body.access_token as string;
  const phones = Array.from({ length: STUCK }, (_, i) => `1555020${String(1000 + i)}`);

  t.test('a stalled send holds at most the sending slots', async (t) => {
    fault.behave((req) => (req.path.endsWith('/Verifications') ? { kind: 'hang' } : normal(req)));
    const stuck = inFlight(phones.map((phone) => api.request('POST', '/otp', { body: { phone } })));
    await slotsHoldTheStall(t, fault, stuck, 'only the sending slots reached the gateway');
    await serviceKeepsAnswering(t, api, bearer, bystander.email, 2);
    fault.release();
    for (const res of await stuck.all) {
      t.ok(
        (res.status === 503 && res.body.error_code === 'database_busy' && res.headers.get('retry-after')) ||
          (res.status === 422 && res.body.error_code === 'sms_send_failed'),
        `a stuck send ends refused or failed: ${res.status} ${res.text.slice(0, 120)}`,
      );
    }
  });

  // /verify asks Twilio inside its transaction: it takes a sending slot (verify/consume.ts).
  t.test('a stalled code check holds at most the sending slots', async (t) => {
    fault.behave(normal);
    for (const phone of phones) {
      const res = await api.request('POST', '/otp', { body: { phone } });
      t.equal(res.status, 200, `a code went out to ${phone}: ${res.text.slice(0, 120)}`);
    }
    fault.behave((req) => (req.path.endsWith('/VerificationCheck') ? { kind: 'hang' } : normal(req)));
    const stuck = inFlight(phones.map((phone) => api.request('POST', '/verify', { body: { type: 'sms', phone, token: '123456' } })));
    await slotsHoldTheStall(t, fault, stuck, 'no more checks than the sending slots wait on the gateway inside a transaction');
    await serviceKeepsAnswering(t, api, bearer, bystander.email, 2);
    fault.release();
    for (const res of await stuck.all) t.not(res.status, 500, `a stuck check does not end in a 500: ${res.text.slice(0, 120)}`);
  });

  t.test('garbage from the gateway is a failed send, never a 500', async (t) => {
    const cases: Array<[string, Behaviour]> = [
      ['16 MiB chunked with no length', { kind: 'huge', bytes: 16 * 1024 * 1024 }],
      ['JSON that does not parse', { kind: 'answer', status: 201, headers: { 'content-type': 'application/json' }, body: '{"sid":' }],
      ['HTML', { kind: 'answer', status: 201, headers: { 'content-type': 'text/html' }, body: '<html></html>' }],
      ['a redirect to itself', { kind: 'answer', status: 307, headers: { location: '/v2/Services/VA123/Verifications' } }],
      ['a 500', { kind: 'answer', status: 500, body: 'boom' }],
      ['the connection dropped', { kind: 'reset' }],
    ];
    for (const [what, behaviour] of cases) {
      fault.behave((req) => (req.path.endsWith('/Verifications') ? behaviour : normal(req)));
      const res = await api.request('POST', '/otp', { body: { phone: '15550309999' } });
      t.same([res.status, res.body.error_code], [422, 'sms_send_failed'], `${what}: ${res.text.slice(0, 160)}`);
    }
    fault.behave(normal);
    t.equal((await api.request('GET', '/user', { token: bearer })).status, 200);
  });
});

// ---------------------------------------------------------------------------------------------------------
// Captcha verifier, leaked-password range API, and an OpenID provider's discovery and keys

t.test('captcha, leaked passwords and OpenID discovery', async (t) => {
  const fault = await startFaultServer();
  const api = await startTestService({
    AUTH_DB_MAX_POOL_SIZE: '6',
    AUTH_HTTP_WORKERS: '1',
    AUTH_DB_ACQUIRE_TIMEOUT: '2',
    AUTH_MAILER_AUTOCONFIRM: 'true',
    // Longer than the test: only the test ends a stall (the range API's 5 s is the original's, not a setting).
    AUTH_INTERNAL_HTTP_TIMEOUT: '60',
    AUTH_API_MAX_REQUEST_DURATION: '90',
    AUTH_SECURITY_CAPTCHA_ENABLED: 'true',
    AUTH_SECURITY_CAPTCHA_PROVIDER: 'hcaptcha',
    AUTH_SECURITY_CAPTCHA_SECRET: 'captcha-secret',
    AUTH_SECURITY_CAPTCHA_VERIFY_URL: `${fault.url}/siteverify`,
    AUTH_SECURITY_CAPTCHA_TIMEOUT: '60',
    AUTH_PASSWORD_HIBP_ENABLED: 'true',
    AUTH_PASSWORD_HIBP_URL: fault.url,
    AUTH_EXTERNAL_APPLE_ENABLED: 'true',
    AUTH_EXTERNAL_APPLE_URL: fault.url,
    AUTH_EXTERNAL_IOS_BUNDLE_ID: 'com.example.ios',
    AUTH_RATE_LIMIT_TOKEN_REFRESH: '10000',
    AUTH_RATE_LIMIT_EMAIL_SENT: '10000',
  });
  t.teardown(async () => {
    await api.stop();
    await fault.close();
  });
  const captcha = (token: string) => ({ gotrue_meta_security: { captcha_token: token } });
  const normal = (req: FaultRequest): Behaviour => {
    if (req.path === '/siteverify') return { kind: 'answer', body: { success: new URLSearchParams(req.body).get('response') === 'good' } };
    if (req.path.startsWith('/range/')) return { kind: 'answer', body: '' };
    return { kind: 'answer', status: 404, body: { error: 'not found' } };
  };
  fault.behave(normal);
  const bystander = await confirmedUser(api);
  const signIn = () =>
    api.request('POST', '/token?grant_type=password', { body: { email: bystander.email, password: PASSWORD, ...captcha('good') } });
  const first = await signIn();
  t.equal(first.status, 200, first.text.slice(0, 120));
  const bearer = first.body.access_token as string;
  const keepsAnswering = async (t: Test) => {
    t.equal((await api.request('GET', '/settings')).status, 200, 'GET /settings answers during the stall');
    const me = await api.request('GET', '/user', { token: bearer });
    t.equal(me.status, 200, `GET /user answers during the stall: ${me.text.slice(0, 120)}`);
    const again = await signIn();
    t.equal(again.status, 200, `a password sign-in succeeds during the stall: ${again.text.slice(0, 120)}`);
    t.equal(await idleInTransaction(api), 0, 'no session idle in transaction during the stall');
  };

  t.test('a stalled captcha verifier is waited on holding no connection', async (t) => {
    fault.behave((req) =>
      req.path === '/siteverify' && new URLSearchParams(req.body).get('response') === 'stall' ? { kind: 'hang' } : normal(req),
    );
    const stuck = inFlight(
      Array.from({ length: STUCK }, () =>
        api.request('POST', '/otp', { body: { email: uniqueEmail('captcha-stall'), ...captcha('stall') } }),
      ),
    );
    await until(
      () => fault.held === STUCK,
      () => stuck.answered > 0,
    );
    t.equal(fault.held, STUCK, 'every request reached the verifier');
    await keepsAnswering(t);
    stallHeldThrough(t, stuck.answered, 'the stall still held');
    fault.release();
    for (const res of await stuck.all) {
      t.same(
        [res.status, res.body.error_code],
        [503, 'captcha_failed'],
        `a stuck request ends as the original's: ${res.text.slice(0, 120)}`,
      );
      t.ok(res.headers.get('retry-after'), 'with Retry-After');
    }
  });

  t.test('garbage from the captcha verifier is captcha_failed, never a 500', async (t) => {
    const cases: Array<[string, Behaviour]> = [
      ['headers, then a body that never ends', { kind: 'headers' }],
      ['16 MiB chunked with no length', { kind: 'huge', bytes: 16 * 1024 * 1024 }],
      ['JSON that does not parse', { kind: 'answer', headers: { 'content-type': 'application/json' }, body: '{"success":' }],
      ['a redirect to itself', { kind: 'answer', status: 307, headers: { location: '/siteverify' } }],
      ['a 500', { kind: 'answer', status: 500, body: 'boom' }],
      ['the connection dropped', { kind: 'reset' }],
    ];
    for (const [what, behaviour] of cases) {
      fault.behave((req) => (req.path === '/siteverify' ? behaviour : normal(req)));
      const pending = api.request('POST', '/otp', { body: { email: uniqueEmail('captcha-garbage'), ...captcha('good') } });
      // A body that never ends is ended by the test once the verifier holds it.
      if (behaviour.kind === 'headers') await until(() => fault.held === 1).then(() => fault.release());
      const res = await pending;
      t.equal(res.status >= 400 && res.status < 600 && res.status !== 500, true, `${what}: ${res.status} ${res.text.slice(0, 160)}`);
      t.equal(res.body.error_code, 'captcha_failed', what);
    }
    fault.behave(normal);
  });

  t.test('a stalled leaked-password API is waited on holding no connection', async (t) => {
    fault.behave((req) => (req.path.startsWith('/range/') ? { kind: 'hang' } : normal(req)));
    // Different passwords, so different prefixes (the same prefix shares one lookup).
    const stuck = inFlight(
      Array.from({ length: STUCK }, (_, i) =>
        api.request('POST', '/signup', {
          body: { email: uniqueEmail('hibp-stall'), password: `Stalled-password-${i}`, ...captcha('good') },
        }),
      ),
    );
    await until(
      () => fault.held >= STUCK - 1,
      () => stuck.answered > 0,
    );
    t.ok(fault.held >= STUCK - 1, `the sign-ups reached the range API (${fault.held})`);
    t.equal((await api.request('GET', '/settings')).status, 200, 'GET /settings answers during the stall');
    t.equal((await api.request('GET', '/user', { token: bearer })).status, 200, 'GET /user answers during the stall');
    t.equal(await idleInTransaction(api), 0, 'no session idle in transaction during the stall');
    stallHeldThrough(t, stuck.answered, 'the stall still held');
    fault.behave(normal);
    fault.release();
    // The check fails open by default: a password the API could not be asked about is taken.
    for (const res of await stuck.all) t.equal(res.status, 200, `a stuck sign-up ends as the original's: ${res.text.slice(0, 120)}`);
  });

  t.test('a stalled discovery document and key set: id_token grants wait holding no connection', async (t) => {
    const idToken = (sub: string) =>
      [
        Buffer.from(JSON.stringify({ alg: 'RS256', kid: 'k1', typ: 'JWT' })).toString('base64url'),
        Buffer.from(
          JSON.stringify({
            iss: fault.url,
            aud: 'com.example.ios',
            sub,
            exp: Math.floor(Date.now() / 1000) + 300,
            iat: Math.floor(Date.now() / 1000),
          }),
        ).toString('base64url'),
        Buffer.from('not a signature').toString('base64url'),
      ].join('.');
    const grant = (sub: string) =>
      api.request('POST', '/token?grant_type=id_token', { body: { provider: 'apple', id_token: idToken(sub) } });
    const discovery = {
      issuer: fault.url,
      authorization_endpoint: `${fault.url}/auth`,
      token_endpoint: `${fault.url}/token`,
      jwks_uri: `${fault.url}/keys`,
      response_types_supported: ['code'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
    };
    for (const stalled of ['/.well-known/openid-configuration', '/keys']) {
      fault.behave((req) => {
        if (req.path === stalled) return { kind: 'hang' };
        if (req.path === '/.well-known/openid-configuration') return { kind: 'answer', body: discovery };
        if (req.path === '/keys') return { kind: 'answer', body: { keys: [] } };
        return normal(req);
      });
      const stuck = inFlight(Array.from({ length: STUCK }, (_, i) => grant(`stalled-${i}`)));
      await until(
        () => fault.held >= 1,
        () => stuck.answered > 0,
      );
      t.ok(fault.held >= 1, `the grants reached ${stalled} (${fault.held})`);
      await keepsAnswering(t);
      stallHeldThrough(t, stuck.answered, `the stall on ${stalled} still held`);
      fault.release();
      for (const res of await stuck.all) {
        // The original's answer to a provider it cannot verify a token with.
        t.same(
          [res.status, res.body],
          [400, { error: 'invalid request', error_description: 'Bad ID token' }],
          `a grant stuck on ${stalled}`,
        );
      }
    }
  });
});
