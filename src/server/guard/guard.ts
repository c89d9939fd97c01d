// The HTTP guard: the service's public listener, in the supervisor thread. It accepts every client
// connection, checks each request head before uWS sees it (relay.ts) and hands the connection's traffic
// to one HTTP thread over a Unix socket, round robin. It exists because the uWS build the service runs
// (20.30) drops many malformed or merely unusual requests without an answer and loses request heads over
// 4 KiB that arrive in more than one read (docs/http-guard.md).
import net from 'node:net';
import type { Logger } from 'pino';
import { apiError } from '../errors.js';
import { lingerThenClose, refusalBytes } from './refusals.js';
import { relay, type RelayedConnection } from './relay.js';

export interface GuardOptions {
  host: string;
  port: number;
  headTimeoutMs: number;
  bodyIdleMs: number;
  keepAliveMs: number;
  upstreamIdleMs: number;
  /** connections held at once, 0 for no limit (docs/http-guard.md#connection-limit) */
  maxConnections: number;
  log: Logger;
}

export interface Guard {
  /** Starts accepting on the public port (once the HTTP threads can answer); resolves with the port. */
  listen(): Promise<number>;
  /** the Unix socket of HTTP thread `index`, or null while it is down or being replaced */
  setUpstream(index: number, path: string | null): void;
  /** Stops accepting; connections already open go on until their thread closes them. */
  stopAccepting(): Promise<void>;
  /** Closes every connection still open. */
  destroy(): void;
}

const LINGER_MS = 2000;
/** connections looked at for a quiet one to close when the guard holds all it may */
const LOOKS_FOR_ROOM = 64;

export function createGuard(options: GuardOptions): Guard {
  const upstreams: Array<string | null> = [];
  /** every open client connection, oldest first (a Map keeps insertion order), but for busy ones passed over */
  const open = new Map<net.Socket, RelayedConnection>();
  let next = 0;
  let loggedAt = 0;
  let refusedSinceLog = 0;

  /**
   * At the limit, the oldest connection quiet between requests makes room, as its keep-alive timer would
   * have closed it later (a client opens a new one when it needs it); when every connection is busy, the
   * new one is answered 503 and closed. Memory per connection stays bounded under a flood of them.
   */
  const roomFor = (client: net.Socket): boolean => {
    if (options.maxConnections <= 0 || open.size < options.maxConnections) return true;
    // A bounded look, so that a flood of new connections while all are busy costs little each: a busy one
    // looked at goes to the back, and the next look starts with others.
    const looks = Math.min(LOOKS_FOR_ROOM, open.size);
    let looked = 0;
    for (const [socket, connection] of open) {
      if (connection.closeIfIdle()) return true;
      open.delete(socket);
      open.set(socket, connection);
      if (++looked === looks) break;
    }
    const err = apiError('over_capacity');
    // One line a second at most, with the count since the last: a flood of connections is no flood of lines.
    refusedSinceLog++;
    if (Date.now() - loggedAt >= 1000) {
      options.log.warn(
        { status: err.status, error_code: err.errorCode, connections: open.size, refused: refusedSinceLog },
        'connections refused by the HTTP guard: every connection it may hold is busy (HTTP_MAX_CONNECTIONS)',
      );
      loggedAt = Date.now();
      refusedSinceLog = 0;
    }
    client.on('error', () => {});
    client.write(refusalBytes(err));
    lingerThenClose(client, LINGER_MS);
    return false;
  };

  const connectUpstream = (tried: Set<string>) => {
    for (let i = 0; i < upstreams.length; i++) {
      const path = upstreams[(next + i) % upstreams.length];
      // A slot not set yet is a hole, not null: a reload's threads may start listening out of order.
      if (!path || tried.has(path)) continue;
      next = (next + i + 1) % upstreams.length;
      return { socket: net.connect(path), id: path };
    }
    return null;
  };

  const server = net.createServer({ noDelay: true }, (client) => {
    if (!roomFor(client)) return;
    client.once('close', () => open.delete(client));
    const connection = relay(client, {
      headTimeoutMs: options.headTimeoutMs,
      bodyIdleMs: options.bodyIdleMs,
      keepAliveMs: options.keepAliveMs,
      upstreamIdleMs: options.upstreamIdleMs,
      lingerMs: LINGER_MS,
      connectUpstream,
      refused: (err, socket) =>
        options.log.info(
          { status: err.status, error_code: err.errorCode, reason: err.message, remote_addr: socket.remoteAddress },
          'request refused by the HTTP guard',
        ),
    });
    open.set(client, connection);
  });
  return {
    listen: () =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(options.port, options.host, () => {
          server.off('error', reject);
          resolve((server.address() as net.AddressInfo).port);
        });
      }),
    setUpstream(index, path) {
      upstreams[index] = path;
    },
    // close()'s callback waits for every connection to end; stopping to accept is immediate.
    stopAccepting: () => {
      server.close();
      return Promise.resolve();
    },
    destroy() {
      for (const socket of open.keys()) socket.destroy();
    },
  };
}
