// Runs bench/limits/argon2-child.mjs with the service's threadpool size and returns argon2 calls/s.
import { fork } from 'node:child_process';
import { progressFor, round } from '../lib/load.mjs';

/** mode 'verify' (password grant) or 'hash' (sign-up); threads = the service's AUTH_CRYPTO_WORKERS. */
export async function argon2Limit(service, options, mode = 'verify') {
  return (await argon2LimitDetail(service, options, mode)).perSec;
}

/** As argon2Limit, with the CPU the child used per call (µs, all its threads): { perSec, cpuUsPerOp }. */
export async function argon2LimitDetail(service, options, mode = 'verify') {
  const env = { ...process.env };
  if (/^\d+$/.test(String(service.uvThreadpool))) env.UV_THREADPOOL_SIZE = String(service.uvThreadpool);
  else delete env.UV_THREADPOOL_SIZE;
  const child = fork(new URL('./argon2-child.mjs', import.meta.url), { env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const stop = progressFor(`limit: argon2id ${mode} direct`, options.duration, () => '…', options.progress);
  try {
    const result = await new Promise((resolve, reject) => {
      child.once('message', resolve);
      child.once('exit', (code) => reject(new Error(`argon2 limit process exited (code ${code})`)));
      child.send({ mode, params: service.hash, threads: service.workers.crypto, seconds: options.duration });
    });
    return { perSec: round(result.perSec), cpuUsPerOp: Math.round(result.cpuUsPerOp) };
  } finally {
    stop();
  }
}
