// A gateway address that answers with a redirect: followed, a 307 or 308 posts the same form again where
// it points, and that form holds Textlocal's and Vonage's keys and the text with the one-time code. The
// send must fail there instead, with nothing sent on (docs/differences.md#mail-and-sms).
import t from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../dist/server/config/load.js';
import { createSmsSender } from '../dist/server/delivery/sms/index.js';
import { captureLog } from './helpers/log.js';
import type { GatewayName } from './helpers/sms.js';

async function listen(handler: http.RequestListener): Promise<{ server: http.Server; url: string }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

// Where a redirect points: any request reaching it is a form that left for an address nobody configured.
const received: string[] = [];
const elsewhere = await listen((req, res) => {
  let body = '';
  req.on('data', (chunk: Buffer) => (body += chunk.toString()));
  req.on('end', () => {
    received.push(`${req.method} ${req.url} ${body}`);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
let status = 307;
const redirecting = await listen((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(status, { location: `${elsewhere.url}${req.url}` }).end());
});

function senderFor(provider: GatewayName) {
  const b = redirecting.url;
  const env = {
    AUTH_SMS_PROVIDER: provider,
    ...{ AUTH_SMS_TWILIO_ACCOUNT_SID: 'ACx', AUTH_SMS_TWILIO_AUTH_TOKEN: 'tw-token', AUTH_SMS_TWILIO_MESSAGE_SERVICE_SID: 'MGx' },
    ...{ AUTH_SMS_TWILIO_VERIFY_ACCOUNT_SID: 'ACv', AUTH_SMS_TWILIO_VERIFY_AUTH_TOKEN: 'tv-token' },
    ...{ AUTH_SMS_TWILIO_VERIFY_MESSAGE_SERVICE_SID: 'VAx', AUTH_SMS_MESSAGEBIRD_ACCESS_KEY: 'mb-key' },
    ...{ AUTH_SMS_MESSAGEBIRD_ORIGINATOR: 'P', AUTH_SMS_TEXTLOCAL_API_KEY: 'tl-key', AUTH_SMS_TEXTLOCAL_SENDER: 'P' },
    ...{ AUTH_SMS_VONAGE_API_KEY: 'vn-key', AUTH_SMS_VONAGE_API_SECRET: 'vn-secret', AUTH_SMS_VONAGE_FROM: 'P' },
    ...{ AUTH_SMS_TWILIO_API_BASE_URL: b, AUTH_SMS_TWILIO_VERIFY_API_BASE_URL: b, AUTH_SMS_MESSAGEBIRD_API_BASE_URL: b },
    ...{ AUTH_SMS_TEXTLOCAL_API_BASE_URL: b, AUTH_SMS_VONAGE_API_BASE_URL: b },
  };
  return createSmsSender(loadConfig({ env, envFile: null }).sms, 10, captureLog().log)!;
}

for (const code of [307, 308]) {
  for (const gateway of ['twilio', 'twilio_verify', 'messagebird', 'textlocal', 'vonage'] as const) {
    t.test(`${gateway}: a ${code} from the gateway's address fails the send, and nothing is posted on`, async (t) => {
      status = code;
      received.length = 0;
      const sending = senderFor(gateway).send('15550800001', 'Your code is 123456', 'sms', '123456');
      await t.rejects(sending, { name: 'SmsSendError', gateway, message: `${gateway} gave an unexpected answer (HTTP ${code})` });
      t.strictSame(received, [], 'the form went nowhere else');
    });
  }
}

t.test('twilio_verify: a redirect answering a code check is a check that could not be made', async (t) => {
  status = 307;
  received.length = 0;
  await t.rejects(senderFor('twilio_verify').verifyOtp!('15550800002', '123456'), { name: 'SmsSendError' });
  t.strictSame(received, [], 'the code went nowhere else');
});
