// Portcullis side by side with a peer TypeScript auth framework (better-auth, bench/lib/peer.mjs) on the
// same machine, in the same run, on the same PostgreSQL server: password sign-in, then reading the
// session back. Each side is loaded in turn, in rounds of [peer ½ slice, Portcullis 1 slice, peer ½ slice],
// so CPU-share drift on a shared machine hits both alike; CPU per request is read per process.
// Not in the default run (`npm run bench -- peer`): it installs the peer from the npm registry.
import { startBenchService } from '../lib/service.mjs';
import { benchContext, JSON_HEADERS } from '../lib/context.mjs';
import { PASSWORD, seedUsers, userEmail } from '../lib/seed.mjs';
import { load, mergeLoads, round, warmupSeconds } from '../lib/load.mjs';
import { cpuAccount } from '../lib/cpu.mjs';
import { peerSessions, startPeer, PEER_PACKAGES } from '../lib/peer.mjs';

const TARGET = 10;
/** As the `user` scenario: one session per connection. */
const SESSION_CONNECTIONS = 32;
const PEER_EMAIL_PREFIX = 'peer-user-';
const peerEmail = (i) => `${PEER_EMAIL_PREFIX}${i}@example.com`;

export async function peer(options) {
  const service = await startBenchService(options);
  let other = null;
  try {
    await seedUsers(service, options.users);
    other = await startPeer(service, {
      users: options.users,
      password: PASSWORD,
      emailPrefix: PEER_EMAIL_PREFIX,
      uvThreadpool: service.uvThreadpool,
      // the same number of database connections as the service has in all
      poolSize: service.poolSize * service.workers.http,
      progress: options.progress,
    });
    const hashing = other.hashing;
    console.log(
      `  peer            better-auth ${other.version} (node http + toNodeHandler, pg pool ${service.poolSize * service.workers.http}), ` +
        `password hash ${hashing.algorithm} N=${hashing.N} r=${hashing.r} p=${hashing.p} dkLen=${hashing.dkLen}; ` +
        `Portcullis argon2id m=${service.hash.memoryKiB} KiB t=${service.hash.timeCost} p=${service.hash.parallelism}, ` +
        `${service.workers.crypto} crypto threads; UV_THREADPOOL_SIZE ${service.uvThreadpool} for both`,
    );
    const bench = benchContext(options, service);
    // better-auth refuses a POST without an Origin it trusts (its CSRF check); a browser sends one.
    const originHeaders = { ...JSON_HEADERS, origin: other.url };
    const signInConnections = 4 * service.workers.crypto;
    let n = 0;
    let m = 0;
    const signIn = await interleave(options, service.pid, other.pid, {
      portcullis: (duration) =>
        bench.load({
          duration,
          title: 'peer: Portcullis password grant',
          path: '/token?grant_type=password',
          connections: signInConnections,
          requests: [
            {
              method: 'POST',
              headers: JSON_HEADERS,
              setupRequest: (req) => ({ ...req, body: JSON.stringify({ email: userEmail(n++ % options.users), password: PASSWORD }) }),
            },
          ],
        }),
      peer: (duration) =>
        loadUrl(options, {
          duration,
          title: 'peer: better-auth sign-in/email',
          url: `${other.url}/api/auth/sign-in/email`,
          connections: signInConnections,
          requests: [
            {
              method: 'POST',
              headers: originHeaders,
              setupRequest: (req) => ({ ...req, body: JSON.stringify({ email: peerEmail(m++ % options.users), password: PASSWORD }) }),
            },
          ],
        }),
    });

    const sessions = await bench.sessions(SESSION_CONNECTIONS);
    const cookies = await peerSessions(other, SESSION_CONNECTIONS, peerEmail, PASSWORD);
    const read = await interleave(options, service.pid, other.pid, {
      portcullis: (duration) =>
        bench.load({
          duration,
          title: 'peer: Portcullis GET /user',
          path: '/user',
          connections: SESSION_CONNECTIONS,
          perConnection: (i) => [{ method: 'GET', headers: { authorization: `Bearer ${sessions[i].access_token}` } }],
        }),
      peer: (duration) =>
        loadUrl(options, {
          duration,
          title: 'peer: better-auth get-session',
          url: `${other.url}/api/auth/get-session`,
          connections: SESSION_CONNECTIONS,
          perConnection: (i) => [{ method: 'GET', headers: { cookie: cookies[i], origin: other.url } }],
        }),
    });

    const measured = {
      'sign-in': {
        ...signIn,
        connections: signInConnections,
        portcullisEndpoint: 'POST /token?grant_type=password',
        peerEndpoint: 'POST /api/auth/sign-in/email',
      },
      'session read': {
        ...read,
        connections: SESSION_CONNECTIONS,
        portcullisEndpoint: 'GET /user (bearer)',
        peerEndpoint: 'GET /api/auth/get-session (cookie)',
      },
    };
    for (const [name, r] of Object.entries(measured)) console.log(peerLine(name, r));
    return {
      measured,
      peer: { packages: PEER_PACKAGES, version: other.version, hashing },
      portcullis: { hash: service.hash, workers: service.workers },
    };
  } finally {
    if (other) await other.stop();
    await service.stop();
  }
}

/** autocannon against the peer (bench.load prefixes the service's URL). */
const loadUrl = (options, rest) => load({ progress: options.progress, ...rest });

/**
 * Rounds of [peer ½, Portcullis 1, peer ½]; each side's slices are merged and its CPU is accounted with
 * its own process as "service". Resolves both sides' rows, the ratio Portcullis ÷ peer and the target.
 */
async function interleave(options, servicePid, peerPid, { portcullis, peer }) {
  const rounds = Math.max(1, Math.round(options.duration / 2.5));
  const slice = options.duration / rounds;
  const ours = [];
  const theirs = [];
  const ourCpu = cpuAccount(servicePid);
  const theirCpu = cpuAccount(peerPid);
  // Both sides answer the same requests for a moment first, discarded: neither is measured while its JIT
  // compiles the endpoint (as bench.bracket warms the service and its limits).
  const warmup = warmupSeconds(slice);
  await portcullis(warmup);
  await peer(warmup);
  for (let i = 0; i < rounds; i++) {
    theirs.push(await theirCpu.measure(() => peer(slice / 2)));
    ours.push(await ourCpu.measure(() => portcullis(slice)));
    theirs.push(await theirCpu.measure(() => peer(slice / 2)));
  }
  const p = mergeLoads(ours);
  const q = mergeLoads(theirs);
  const ratio = q.reqPerSec > 0 ? round(p.reqPerSec / q.reqPerSec, 2) : 0;
  return {
    portcullis: { ...p, cpu: ourCpu.perOp(p.requests) },
    peer: { ...q, cpu: theirCpu.perOp(q.requests) },
    ratio,
    target: TARGET,
    meetsTarget: ratio >= TARGET,
  };
}

function peerLine(name, r) {
  const side = (label, s) => {
    const bad = s.non2xx || s.errors ? `, ${s.non2xx} non-2xx ${JSON.stringify(s.statuses)}, ${s.errors} errors` : '';
    return `${label} ${s.reqPerSec} req/s (p50 ${s.p50} ms, p99 ${s.p99} ms${bad})`;
  };
  const cpu = (label, c) =>
    c
      ? `\n  ${''.padEnd(15)} µs of CPU per request, ${label}: its process ${c.serviceUs}, database ${c.databaseUs}, bench ${c.benchUs}, other ${c.otherUs} (machine ${Math.round(c.machineBusy * 100)}% busy)`
      : '';
  return (
    `  peer            ${name.padEnd(12)} ${side('Portcullis', r.portcullis)} vs ${side('better-auth', r.peer)}: ` +
    `ratio ${r.ratio} (target ≥ ${r.target}${r.meetsTarget ? ' ok' : ' MISSED'})` +
    cpu('Portcullis', r.portcullis.cpu) +
    cpu('better-auth', r.peer.cpu)
  );
}
