// A local fake of the hCaptcha / Cloudflare Turnstile siteverify endpoint, speaking their wire format:
// a form-encoded POST of secret, response and remoteip, answered with JSON {success, "error-codes"}.
// Tokens it accepts are registered by the test; it can also stall (accept the request, never answer).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SiteverifyRequest {
  path: string;
  contentType: string;
  secret: string;
  response: string;
  remoteip: string;
}

export interface SiteverifyFake {
  /** the verify URL to give the service (SECURITY_CAPTCHA_VERIFY_URL) */
  url: string;
  requests: SiteverifyRequest[];
  /** tokens that verify successfully; any other answers success: false with invalid-input-response */
  accept(token: string): void;
  /** a token refused with these error codes */
  reject(token: string, codes: string[]): void;
  /** from now on, hold every request open without answering (until close) */
  stall(stalled: boolean): void;
  close(): Promise<void>;
}

export async function startSiteverifyFake(secret: string): Promise<SiteverifyFake> {
  const accepted = new Set<string>();
  const refused = new Map<string, string[]>();
  const requests: SiteverifyRequest[] = [];
  let stalled = false;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const seen = {
        path: req.url ?? '',
        contentType: req.headers['content-type'] ?? '',
        secret: form.get('secret') ?? '',
        response: form.get('response') ?? '',
        remoteip: form.get('remoteip') ?? '',
      };
      requests.push(seen);
      if (stalled) return; // the socket stays open: the service must give up on its own
      const codes =
        seen.secret !== secret
          ? ['invalid-input-secret']
          : (refused.get(seen.response) ?? (accepted.has(seen.response) ? [] : ['invalid-input-response']));
      const body = codes.length
        ? { success: false, 'error-codes': codes }
        : { success: true, challenge_ts: new Date().toISOString(), hostname: 'localhost' };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/siteverify`,
    requests,
    accept: (token) => {
      accepted.add(token);
    },
    reject: (token, codes) => {
      refused.set(token, codes);
    },
    stall: (value) => {
      stalled = value;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
