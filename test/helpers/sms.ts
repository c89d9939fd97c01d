// One local HTTP server that plays all five SMS gateways on their real paths (REFERENCE 10), so the
// service's gateway modules are tested over the wire. Point every SMS_*_API_BASE_URL at `baseUrl`.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInbox } from './inbox.js';
import * as gateways from './sms-gateways.js';
import type { FailureKind, FakeReply, FakeRequest, FakeSms, GatewayName, VerifyState } from './sms-gateways.js';

export type { FailureKind, FakeSms, GatewayName } from './sms-gateways.js';

export interface SmsGatewayFake {
  baseUrl: string;
  /** every message a gateway accepted, in order */
  messages: FakeSms[];
  /** The next accepted message to `to` (digits, '+' optional) not yet returned; rejects after timeoutMs (default 5000). */
  waitForMessage(to: string, timeoutMs?: number): Promise<FakeSms>;
  /** Make the gateway's next request fail: 'http' = error status + error body, 'status' = refusal inside a 2xx body (FailureKind). */
  failNext(gateway: GatewayName, kind?: FailureKind): void;
  /** Hold the gateway's next request for `ms` before handling and answering it (a slow gateway). */
  delayNext(gateway: GatewayName, ms: number): void;
  close(): Promise<void>;
}

// The failure each gateway most often shows in practice, used when failNext() is given no kind.
const DEFAULT_FAILURE: Record<GatewayName, FailureKind> = {
  twilio: 'http',
  twilio_verify: 'http',
  messagebird: 'http',
  textlocal: 'status',
  vonage: 'status',
};
const SUPPORTED_FAILURES: Record<GatewayName, FailureKind[]> = {
  twilio: ['http', 'status', 'echo'],
  twilio_verify: ['http'],
  messagebird: ['http', 'status', 'echo'],
  textlocal: ['http', 'status', 'template', 'echo'],
  vonage: ['http', 'status', 'echo'],
};

/** The settings that send SMS through the fake's Twilio (phone sign-in itself is switched on apart). */
export const twilioEnv = (baseUrl: string): Record<string, string> => ({
  AUTH_SMS_PROVIDER: 'twilio',
  AUTH_SMS_TWILIO_API_BASE_URL: baseUrl,
  AUTH_SMS_TWILIO_ACCOUNT_SID: 'AC123',
  AUTH_SMS_TWILIO_AUTH_TOKEN: 'secret',
  AUTH_SMS_TWILIO_MESSAGE_SERVICE_SID: 'MG123',
});

/** The settings that send SMS through the fake's Twilio Verify, which makes and checks the codes itself. */
export const twilioVerifyEnv = (baseUrl: string): Record<string, string> => ({
  AUTH_SMS_PROVIDER: 'twilio_verify',
  AUTH_SMS_TWILIO_VERIFY_API_BASE_URL: baseUrl,
  AUTH_SMS_TWILIO_VERIFY_ACCOUNT_SID: 'AC9',
  AUTH_SMS_TWILIO_VERIFY_AUTH_TOKEN: 'tok',
  AUTH_SMS_TWILIO_VERIFY_MESSAGE_SERVICE_SID: 'VA1',
});

/** The settings that send SMS through each of the fake's gateways. */
export const gatewayEnvs = (baseUrl: string): Record<GatewayName, Record<string, string>> => ({
  twilio: twilioEnv(baseUrl),
  twilio_verify: twilioVerifyEnv(baseUrl),
  messagebird: {
    AUTH_SMS_PROVIDER: 'messagebird',
    AUTH_SMS_MESSAGEBIRD_API_BASE_URL: baseUrl,
    AUTH_SMS_MESSAGEBIRD_ACCESS_KEY: 'bird-key',
    AUTH_SMS_MESSAGEBIRD_ORIGINATOR: 'Portcullis',
  },
  textlocal: {
    AUTH_SMS_PROVIDER: 'textlocal',
    AUTH_SMS_TEXTLOCAL_API_BASE_URL: baseUrl,
    AUTH_SMS_TEXTLOCAL_API_KEY: 'tl-key',
    AUTH_SMS_TEXTLOCAL_SENDER: 'PRTCLS',
  },
  vonage: {
    AUTH_SMS_PROVIDER: 'vonage',
    AUTH_SMS_VONAGE_API_BASE_URL: baseUrl,
    AUTH_SMS_VONAGE_API_KEY: 'vn-key',
    AUTH_SMS_VONAGE_API_SECRET: 'vn-secret',
    AUTH_SMS_VONAGE_FROM: 'Portcullis',
  },
});

type Route = { gateway: GatewayName; pattern: RegExp; handle: (request: FakeRequest) => FakeReply };

export async function startSmsGatewayFake(): Promise<SmsGatewayFake> {
  const inbox = createInbox<FakeSms>((m) => `${m.gateway} to ${m.to}`);
  const failures = new Map<GatewayName, FailureKind>();
  const delays = new Map<GatewayName, number>();
  const timers = new Set<NodeJS.Timeout>();
  const verify: VerifyState = new Map();
  const routes: Route[] = [
    { gateway: 'twilio', pattern: /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/, handle: gateways.twilioMessages },
    {
      gateway: 'twilio_verify',
      pattern: /^\/v2\/Services\/([^/]+)\/Verifications$/,
      handle: (r) => gateways.twilioVerifications(verify, r),
    },
    {
      gateway: 'twilio_verify',
      pattern: /^\/v2\/Services\/([^/]+)\/VerificationCheck$/,
      handle: (r) => gateways.twilioVerificationCheck(verify, r),
    },
    { gateway: 'messagebird', pattern: /^\/messages$/, handle: gateways.messagebird },
    { gateway: 'textlocal', pattern: /^\/send\/?$/, handle: gateways.textlocal },
    { gateway: 'vonage', pattern: /^\/sms\/json$/, handle: gateways.vonage },
  ];

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const reply = () => {
        const r = answer(req, Buffer.concat(chunks).toString('utf8'));
        if (r.sms) inbox.add(r.sms);
        res.writeHead(r.status, { 'content-type': 'application/json' }).end(JSON.stringify(r.json));
      };
      const gateway = routeOf(req)?.gateway;
      const delay = gateway ? delays.get(gateway) : undefined;
      if (gateway === undefined || delay === undefined) return reply();
      delays.delete(gateway);
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (!res.destroyed) reply();
      }, delay);
      timers.add(timer);
    });
  });

  function routeOf(req: http.IncomingMessage): Route | undefined {
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    return routes.find((route) => route.pattern.test(path));
  }

  function answer(req: http.IncomingMessage, body: string): FakeReply {
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    for (const route of routes) {
      const match = route.pattern.exec(path);
      if (!match) continue;
      if (req.method !== 'POST') return { status: 405, json: { error: `fake: ${req.method} not allowed on ${path}` } };
      if (!req.headers['content-type']?.startsWith('application/x-www-form-urlencoded')) {
        return { status: 415, json: { error: 'fake: gateways expect application/x-www-form-urlencoded' } };
      }
      const failure = failures.get(route.gateway) ?? null;
      failures.delete(route.gateway);
      const fields = Object.fromEntries(new URLSearchParams(body));
      return route.handle({ params: match.slice(1).map(decodeURIComponent), headers: req.headers, fields, path, failure });
    }
    return { status: 404, json: { error: `fake: no gateway serves ${path}` } };
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    messages: inbox.items,
    waitForMessage(to, timeoutMs = 5000) {
      const wanted = to.replace(/[\s+]/g, '');
      return inbox.waitFor((m) => m.to === wanted, timeoutMs, `SMS to ${wanted}`);
    },
    failNext(gateway, kind = DEFAULT_FAILURE[gateway]) {
      if (!SUPPORTED_FAILURES[gateway].includes(kind)) throw new TypeError(`fake ${gateway} has no '${kind}' failure`);
      failures.set(gateway, kind);
    },
    delayNext(gateway, ms) {
      delays.set(gateway, ms);
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const timer of timers) clearTimeout(timer);
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
