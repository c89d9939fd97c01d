// Password hashing through the crypto pool (src/workers/crypto.ts behind src/server/crypto/pool.ts).
// Small argon2 parameters keep the suite fast; the formats and decisions are the same.
import t from 'tap';
import { MessageChannel, Worker } from 'node:worker_threads';
import bcrypt from 'bcryptjs';
import { connectCryptoPool, createCryptoPool } from '../dist/server/crypto/pool.js';

const params = { memoryKiB: 1024, timeCost: 1, parallelism: 1 };
const host = createCryptoPool({ threads: 2, params });
const hasher = host.local();
t.teardown(() => host.close());

// Made by the argon2 package's own encoder (parameters in m,p,t order) for "correct horse".
const LIBRARY_ARGON2ID = '$argon2id$v=19$m=2048,p=1,t=2$BXnsvuCi/pa9ubIleNqyVA$F2pMpGY9/DV+xRyrQrYh00emcJIllbCJkrJxeZgQOxY';
const LIBRARY_ARGON2I = '$argon2i$v=19$m=1024,p=2,t=1$DhhYEJL4am6HXfWklC5SuA$LfOuwRbOXfYr/6gKDfE9PmFKy+vryvzRchS1KwCyr5A';
// Firebase's modified scrypt, the public test vector for "mytestpassword".
const FIREBASE =
  '$fbscrypt$v=1,n=14,r=8,p=1,ss=Bw==,sk=ou9tdYTGyYm8kuR6Dt0Bp0kDuAYoXrK16mbZO4yGwAn3oLspjnN0/c41v8xZnO1n14J3MjKj1b2g6AUCAlFwMw==$C0sHCg9ek77hsg==$zKVTMvnWVw5BBOZNUdnsalx4c4c7y/w7IS5p6Ut2+CfEFFlz37J9huyQfov4iizN8dbjvEJlM5tQaJP84+hfTw==';

t.test('hash makes a canonical argon2id PHC string that verifies', async (t) => {
  const hash = await hasher.hash('hunter22');
  t.match(hash, /^\$argon2id\$v=19\$m=1024,t=1,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
  t.same(await hasher.verify(hash, 'hunter22'), { ok: true, needsRehash: false });
  t.not(await hasher.hash('hunter22'), hash, 'fresh salt each time');
});

t.test('a wrong password does not verify', async (t) => {
  t.same(await hasher.verify(await hasher.hash('hunter22'), 'hunter23'), { ok: false, needsRehash: false });
});

t.test('no hash (unknown user) is not ok', async (t) => {
  t.same(await hasher.verify(null, 'anything'), { ok: false, needsRehash: false });
});

t.test('unreadable or unverifiable hashes are not ok and never throw', async (t) => {
  const tooMuchMemory = LIBRARY_ARGON2ID.replace('m=2048', 'm=262145');
  const tooMuchWork = LIBRARY_ARGON2ID.replace('m=2048', 'm=262144').replace('t=2', 't=5');
  const tooManyPasses = LIBRARY_ARGON2ID.replace('t=2', 't=21');
  const extraParam = LIBRARY_ARGON2ID.replace('t=2', 't=2,keyid=1');
  const oldVersion = LIBRARY_ARGON2ID.replace('v=19', 'v=16');
  for (const hash of [
    '',
    'garbage',
    '$argon2id$',
    '$2a$10$short',
    '$fbscrypt$v=2',
    tooMuchMemory,
    tooMuchWork,
    tooManyPasses,
    extraParam,
    oldVersion,
    '$argon2d$v=19$m=1024,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2g',
    // bcrypt past cost 16 would outlast any request (31 takes days) holding its crypto thread: never run.
    bcrypt.hashSync('correct horse', 4).replace('$04$', '$17$'),
    bcrypt.hashSync('correct horse', 4).replace('$04$', '$31$'),
  ]) {
    t.same(await hasher.verify(hash, 'correct horse'), { ok: false, needsRehash: false }, JSON.stringify(hash));
  }
});

t.test('argon2 hashes made elsewhere, with other parameters, verify and ask for a rehash', async (t) => {
  t.same(await hasher.verify(LIBRARY_ARGON2ID, 'correct horse'), { ok: true, needsRehash: true });
  t.same(await hasher.verify(LIBRARY_ARGON2I, 'correct horse'), { ok: true, needsRehash: true }, 'argon2i');
  t.same(await hasher.verify(LIBRARY_ARGON2ID, 'wrong horse'), { ok: false, needsRehash: false });
  const other = createCryptoPool({ threads: 1, params: { ...params, timeCost: 2 } });
  t.teardown(() => other.close());
  const hash = await other.local().hash('hunter22');
  t.same(await hasher.verify(hash, 'hunter22'), { ok: true, needsRehash: true }, 'our own hash, older parameters');
});

t.test('bcrypt hashes (the original service stores these) verify and ask for a rehash', async (t) => {
  const hash = bcrypt.hashSync('hunter22', 4);
  t.same(await hasher.verify(hash, 'hunter22'), { ok: true, needsRehash: true });
  t.same(await hasher.verify(hash.replace(/^\$2b\$/, '$2y$'), 'hunter22'), { ok: true, needsRehash: true }, '$2y$');
  t.same(await hasher.verify(hash, 'hunter23'), { ok: false, needsRehash: false });
});

t.test('Firebase scrypt hashes verify and ask for a rehash', async (t) => {
  t.same(await hasher.verify(FIREBASE, 'mytestpassword'), { ok: true, needsRehash: true });
  t.same(await hasher.verify(FIREBASE, 'mytestpassword!'), { ok: false, needsRehash: false });
});

t.test('an HTTP-style worker thread hashes and verifies through its MessagePort, then exits', async (t) => {
  const port = host.connect();
  const code = `
    const { workerData, parentPort } = require('node:worker_threads');
    import(workerData.module).then(async ({ connectCryptoPool }) => {
      const hasher = connectCryptoPool(workerData.port, workerData.params);
      const hash = await hasher.hash('worker password');
      const [good, bad] = await Promise.all([hasher.verify(hash, 'worker password'), hasher.verify(hash, 'nope')]);
      parentPort.postMessage({ hash, good, bad });
    });`;
  const worker = new Worker(code, {
    eval: true,
    transferList: [port],
    workerData: { port, params, module: new URL('../dist/server/crypto/pool.js', import.meta.url).href },
  });
  const [reply] = await Promise.all([
    new Promise<any>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    }),
    new Promise<number>((resolve) => worker.once('exit', resolve)).then((code) =>
      t.equal(code, 0, 'the idle port did not keep the thread alive'),
    ),
  ]);
  t.match(reply.hash, /^\$argon2id\$/);
  t.same(reply.good, { ok: true, needsRehash: false });
  t.same(reply.bad, { ok: false, needsRehash: false });
});

t.test('the host refuses task names it does not serve', async (t) => {
  const port = host.connect();
  // The first message is the host's fullness flag (PasswordHasher.busy); the reply comes after it.
  const reply = new Promise((resolve) => port.on('message', (m: object) => 'id' in m && resolve(m)));
  port.postMessage({ id: 7, task: 'constructor', arg: {} });
  t.same(await reply, { id: 7, error: 'unknown crypto task constructor' });
  port.close();
});

t.test('the host keeps every port told whether its queue is full', async (t) => {
  const port = host.connect();
  const flag = await new Promise<SharedArrayBuffer>((resolve) =>
    port.once('message', (m: { fullness: SharedArrayBuffer }) => resolve(m.fullness)),
  );
  t.equal(Atomics.load(new Int32Array(flag), 0), 0, 'an idle pool is not full');
  t.equal(host.local().busy(), false);
  port.close();
});

t.test('calls in flight are rejected when the port closes, later calls at once', async (t) => {
  const { port1, port2 } = new MessageChannel();
  const remote = connectCryptoPool(port2, params);
  const inFlight = remote.verify(null, 'x');
  port1.close();
  await t.rejects(inFlight, { message: 'crypto pool: port closed' });
  await t.rejects(remote.hash('x'), { message: 'crypto pool: port closed' });
});

t.test('a full queue refuses at once with a 503 and Retry-After; the admitted hashes finish', async (t) => {
  const small = createCryptoPool({ threads: 1, params: { ...params, maxQueue: 2 } });
  t.teardown(() => small.close());
  const local = small.local();
  const calls = Array.from({ length: 4 }, () =>
    local.hash('hunter22').then(
      (hash) => ({ hash }),
      (error) => ({ error }),
    ),
  );
  const [a, b, c, refused] = await Promise.all(calls);
  for (const admitted of [a, b, c]) t.match(admitted, { hash: /^\$argon2id\$/ });
  t.match(refused, { error: { status: 503, errorCode: 'over_capacity', retryAfterSeconds: 1 } });
  t.match(small.stats(), { completed: 3, refused: 1, dropped: 0, running: 0, queued: 0 });
});

t.test('the pool sums how long hashes waited and ran (the metrics read these totals)', async (t) => {
  const one = createCryptoPool({ threads: 1, params });
  t.teardown(() => one.close());
  const local = one.local();
  t.match(one.stats(), { waitedMs: 0, ranMs: 0 });
  await local.hash('first'); // a free thread: runs at once, waits nothing
  const alone = one.stats();
  t.equal(alone.waitedMs, 0, 'a hash that started at once waited nothing');
  t.ok(alone.ranMs > 0);
  await Promise.all([local.hash('second'), local.hash('third')]); // the third waits for the second
  const queued = one.stats();
  t.ok(queued.waitedMs > 0, 'a queued hash adds its wait');
  t.ok(queued.ranMs > alone.ranMs);
});

t.test('a hash whose request gave up while it waited is dropped, not run', async (t) => {
  const one = createCryptoPool({ threads: 1, params });
  t.teardown(() => one.close());
  const local = one.local();
  const gaveUp = new AbortController();
  const running = local.hash('first');
  const waiting = local.hash('second', gaveUp.signal);
  const reason = new Error('deadline');
  gaveUp.abort(reason);
  await t.rejects(waiting, reason, "rejects with the request's reason");
  t.match(await running, /^\$argon2id\$/);
  t.match(one.stats(), { completed: 1, dropped: 1, refused: 0, queued: 0 });
});

t.test('over a port, a request that gave up stops waiting and its queued hash is dropped', async (t) => {
  const one = createCryptoPool({ threads: 1, params });
  t.teardown(() => one.close());
  const remote = connectCryptoPool(one.connect(), params);
  const gaveUp = new AbortController();
  const running = remote.hash('first');
  const waiting = remote.hash('second', gaveUp.signal);
  const third = remote.hash('third');
  await new Promise((resolve) => setImmediate(resolve));
  const reason = new Error('deadline');
  gaveUp.abort(reason);
  await t.rejects(waiting, reason);
  t.match(await running, /^\$argon2id\$/);
  t.match(await third, /^\$argon2id\$/);
  t.match(one.stats(), { completed: 2, dropped: 1 });
});
