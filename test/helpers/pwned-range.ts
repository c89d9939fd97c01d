// A local fake of the Pwned Passwords range API (GET /range/<5 hex digits of SHA-1>), speaking its wire
// format: text/plain, one `SUFFIX:COUNT` line per leaked hash under the prefix (35 uppercase hex digits),
// lines ended by CRLF, and with `Add-Padding: true` extra lines of count 0 that stand for no password.
// The test registers leaked passwords and padding entries; it can stall the fake (accept requests, never
// answer), make it answer an error status, and kill it (connections refused).
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RangeRequest {
  method: string;
  path: string;
  userAgent: string;
  addPadding: string;
}

export interface RangeFake {
  /** the base URL to give the service (PASSWORD_HIBP_URL) */
  url: string;
  requests: RangeRequest[];
  /** a password the fake reports as seen `count` times in breaches */
  leak(password: string, count?: number): void;
  /** a password whose suffix appears only as a padding line (count 0) */
  pad(password: string): void;
  /** from now on hold every request open without answering (true), or answer again (false) */
  stall(stalled: boolean): void;
  /** from now on answer every request with this status and no range (0: answer normally) */
  failWith(status: number): void;
  /** stops listening and drops every connection: the service's requests are refused from now on */
  kill(): Promise<void>;
}

/** The uppercase SHA-1 of a password, split as the range API splits it. */
export function rangeKey(password: string): { prefix: string; suffix: string } {
  const hex = createHash('sha1').update(password, 'utf8').digest('hex').toUpperCase();
  return { prefix: hex.slice(0, 5), suffix: hex.slice(5) };
}

export async function startRangeFake(): Promise<RangeFake> {
  const counts = new Map<string, number>(); // full uppercase hash → count (0 = padding)
  const requests: RangeRequest[] = [];
  let stalled = false;
  let failure = 0;
  const server = http.createServer((req, res) => {
    requests.push({
      method: req.method ?? '',
      path: req.url ?? '',
      userAgent: req.headers['user-agent'] ?? '',
      addPadding: String(req.headers['add-padding'] ?? ''),
    });
    if (stalled) return; // the socket stays open: the service must give up on its own
    if (failure) {
      res.writeHead(failure, { 'content-type': 'text/plain' }).end('Service Unavailable');
      return;
    }
    const match = /^\/range\/([0-9A-F]{5})$/.exec(req.url ?? '');
    if (req.method !== 'GET' || !match) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('The hash prefix was not in a valid format');
      return;
    }
    const prefix = match[1];
    const padded = req.headers['add-padding'] === 'true';
    const lines = [...counts]
      .filter(([hash, count]) => hash.startsWith(prefix) && (count > 0 || padded))
      .map(([hash, count]) => `${hash.slice(5)}:${count}`);
    // Other leaked hashes under the prefix, and when asked, padding lines of count 0, as real answers have.
    for (let i = 0; i < 3; i++) lines.push(`${filler(prefix, i)}:${i + 1}`);
    if (padded) for (let i = 3; i < 6; i++) lines.push(`${filler(prefix, i)}:0`);
    lines.sort();
    res.writeHead(200, { 'content-type': 'text/plain' }).end(lines.join('\r\n'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    leak: (password, count = 42) => {
      const { prefix, suffix } = rangeKey(password);
      counts.set(prefix + suffix, count);
    },
    pad: (password) => {
      const { prefix, suffix } = rangeKey(password);
      counts.set(prefix + suffix, 0);
    },
    stall: (value) => {
      stalled = value;
    },
    failWith: (status) => {
      failure = status;
    },
    kill: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A made-up suffix of another leaked hash (35 uppercase hex digits). */
function filler(prefix: string, i: number): string {
  return createHash('sha1').update(`${prefix}-${i}`).digest('hex').toUpperCase().slice(0, 35);
}
