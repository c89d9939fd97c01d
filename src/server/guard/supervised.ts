// The guard as the supervisor runs it: the guard itself plus the private directory of the HTTP threads'
// Unix sockets, created with it and removed when it closes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config/types.js';
import { createGuard, type Guard } from './guard.js';

/** uWS's own idle timeout: a head must be complete, and a silent connection speaks, within it. */
const HEAD_TIMEOUT_MS = 10_000;
/**
 * A body that stops arriving is answered 408 after this long. uWS, which has the head by then, closes such a
 * connection without an answer 8 to 12 s after its last read (10 s on a timer that ticks every 4 s).
 */
const BODY_IDLE_MS = 7_000;
/**
 * How long a kept-alive connection may be quiet between requests. The original sets no limit; this one is
 * above what proxies keep their idle connections to a service for (nginx and Kong 60 s, AWS load balancers
 * 60 s, Google's 600 s, Cloudflare 900 s, Envoy an hour), so that they close first and never write a
 * request into the service's close.
 */
const KEEP_ALIVE_MS = 3_900_000;
/** A connection to an HTTP thread quiet this long is replaced, well before uWS's timer (8–12 s) can close it. */
const UPSTREAM_IDLE_MS = 4_000;

export interface SupervisedGuard extends Guard {
  /** the Unix socket path for HTTP thread `index`, cleared of what a crashed thread left there */
  socketFor(index: number): string;
  /** closes every connection and removes the socket directory */
  close(): Promise<void>;
}

export function superviseGuard(config: Config, log: Logger): SupervisedGuard {
  // mkdtemp creates the directory 0700: only the service's user can reach the threads behind the guard.
  const socketDir = fs.mkdtempSync(path.join(os.tmpdir(), 'portcullis-'));
  const guard = createGuard({
    host: config.api.host,
    port: config.api.port,
    headTimeoutMs: HEAD_TIMEOUT_MS,
    bodyIdleMs: BODY_IDLE_MS,
    keepAliveMs: KEEP_ALIVE_MS,
    upstreamIdleMs: UPSTREAM_IDLE_MS,
    maxConnections: config.api.maxConnections,
    log,
  });
  return {
    ...guard,
    socketFor(index) {
      const socketPath = path.join(socketDir, `http-${index}.sock`);
      fs.rmSync(socketPath, { force: true });
      return socketPath;
    },
    close: async () => {
      await guard.stopAccepting();
      guard.destroy();
      fs.rmSync(socketDir, { recursive: true, force: true });
    },
  };
}
