// The five SMS gateways as the fake in sms.ts plays them: each checks the auth its real API uses,
// validates the form fields it requires, and answers in its real success and error shapes
// (REFERENCE 10; shapes from each gateway's public API documentation).
import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

export type GatewayName = 'twilio' | 'twilio_verify' | 'messagebird' | 'textlocal' | 'vonage';
/**
 * 'http': an error status with the gateway's error body; 'status': HTTP success, refusal in the body;
 * 'template' (Textlocal): the text matches none of the account's approved templates; 'echo': a refusal whose
 * error text repeats the text sent (a misbehaving gateway or proxy), the message still recorded as sent so a
 * test knows what it held.
 */
export type FailureKind = 'http' | 'status' | 'template' | 'echo';

export interface FakeSms {
  gateway: GatewayName;
  /** the id the fake answered with (Twilio Verify: the verification sid) */
  id: string;
  /** digits, no '+' and no 'whatsapp:' prefix */
  to: string;
  body: string;
  channel: 'sms' | 'whatsapp';
  /** Twilio Verify only: the code the fake generated and "sent" */
  code?: string;
  /** the credentials the request carried, by the gateway's own names */
  auth: Record<string, string>;
  path: string;
  fields: Record<string, string>;
}

export interface FakeRequest {
  params: string[];
  headers: IncomingHttpHeaders;
  fields: Record<string, string>;
  path: string;
  failure: FailureKind | null;
}
export interface FakeReply {
  status: number;
  json: unknown;
  sms?: FakeSms;
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const digits = (phone: string) => phone.replace(/^whatsapp:/, '').replace(/^\+/, '');
const E164 = /^\+[1-9]\d{1,14}$/;

function basic(headers: IncomingHttpHeaders): { username: string; password: string } | null {
  const match = /^Basic (.+)$/.exec(headers.authorization ?? '');
  if (!match) return null;
  const [username, ...rest] = Buffer.from(match[1], 'base64').toString().split(':');
  return username && rest.length ? { username, password: rest.join(':') } : null;
}

const twilioError = (status: number, code: number, message: string): FakeReply => ({
  status,
  json: { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status },
});

export function twilioMessages({ params: [accountSid], headers, fields, path, failure }: FakeRequest): FakeReply {
  const auth = basic(headers);
  if (!auth || auth.username !== accountSid) return twilioError(401, 20003, 'Authenticate');
  const to = fields.To ?? '';
  if (!to) return twilioError(400, 21604, "A 'To' phone number is required.");
  if (!E164.test(to.replace(/^whatsapp:/, '')) || failure === 'http')
    return twilioError(400, 21211, `The 'To' number ${to} is not a valid phone number.`);
  if (!fields.From && !fields.MessagingServiceSid) return twilioError(400, 21603, "A 'From' phone number is required.");
  if (!fields.Body && !fields.ContentSid) return twilioError(400, 21602, 'Message body is required.');
  const sid = `SM${hex(16)}`;
  if (failure === 'echo') {
    const sms = echoed('twilio', sid, digits(to), fields.Body ?? '', auth, path, fields);
    return { ...twilioError(400, 21617, `The concatenated message body exceeds the limit: ${sms.body}`), sms };
  }
  const failed = failure === 'status';
  const sms: FakeSms = {
    gateway: 'twilio',
    id: sid,
    to: digits(to),
    body: fields.Body ?? '',
    channel: to.startsWith('whatsapp:') ? 'whatsapp' : 'sms',
    auth: { ...auth },
    path,
    fields,
  };
  const json = {
    account_sid: accountSid,
    api_version: '2010-04-01',
    body: fields.Body ?? '',
    date_created: new Date().toUTCString(),
    direction: 'outbound-api',
    error_code: failed ? 30008 : null,
    error_message: failed ? 'Unknown error' : null,
    from: fields.From?.startsWith('MG') ? null : fields.From,
    messaging_service_sid: fields.From?.startsWith('MG') ? fields.From : null,
    num_segments: '1',
    price: null,
    sid,
    status: failed ? 'failed' : 'queued',
    to,
    uri: `/2010-04-01/Accounts/${accountSid}/Messages/${sid}.json`,
  };
  return { status: 201, json, sms: failed ? undefined : sms };
}

/** Pending Twilio Verify codes, per service and number. */
export type VerifyState = Map<string, { sid: string; code: string }>;

export function twilioVerifications(state: VerifyState, { params: [serviceSid], headers, fields, path, failure }: FakeRequest): FakeReply {
  const auth = basic(headers);
  if (!auth) return twilioError(401, 20003, 'Authenticate');
  if (!E164.test(fields.To ?? '')) return twilioError(400, 60200, 'Invalid parameter `To`: ' + (fields.To ?? ''));
  if (!['sms', 'whatsapp', 'call', 'email'].includes(fields.Channel ?? '')) return twilioError(400, 60200, 'Invalid parameter: Channel');
  if (failure) return twilioError(429, 60203, 'Max send attempts reached');
  const sid = `VE${hex(16)}`;
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
  state.set(`${serviceSid}:${fields.To}`, { sid, code });
  const sms: FakeSms = {
    gateway: 'twilio_verify',
    id: sid,
    to: digits(fields.To),
    body: `Your verification code is: ${code}`,
    channel: fields.Channel as 'sms',
    code,
    auth: { ...auth },
    path,
    fields,
  };
  const json = {
    sid,
    service_sid: serviceSid,
    account_sid: auth.username,
    to: fields.To,
    channel: fields.Channel,
    status: 'pending',
    valid: false,
    date_created: new Date().toISOString(),
  };
  return { status: 201, json, sms };
}

export function twilioVerificationCheck(state: VerifyState, { params: [serviceSid], headers, fields, failure }: FakeRequest): FakeReply {
  const auth = basic(headers);
  if (!auth) return twilioError(401, 20003, 'Authenticate');
  // Twilio's answer while the service is down; the pending verification is left as it was.
  if (failure) return twilioError(503, 20503, 'Service Unavailable');
  const pending = state.get(`${serviceSid}:${fields.To}`);
  if (!pending) return twilioError(404, 20404, `The requested resource /Services/${serviceSid}/VerificationCheck was not found`);
  const approved = fields.Code === pending.code;
  if (approved) state.delete(`${serviceSid}:${fields.To}`);
  const json = {
    sid: pending.sid,
    service_sid: serviceSid,
    account_sid: auth.username,
    to: fields.To,
    channel: 'sms',
    status: approved ? 'approved' : 'pending',
    valid: approved,
  };
  return { status: 200, json };
}

const birdError = (status: number, code: number, description: string, parameter: string | null): FakeReply => ({
  status,
  json: { errors: [{ code, description, parameter }] },
});

export function messagebird({ headers, fields, path, failure }: FakeRequest): FakeReply {
  const key = /^AccessKey (.+)$/.exec(headers.authorization ?? '')?.[1];
  if (!key) return birdError(401, 2, 'Request not allowed (incorrect access_key)', null);
  if (!fields.originator) return birdError(422, 9, 'originator is required', 'originator');
  if (!fields.body) return birdError(422, 9, 'body is required', 'body');
  if (!/^\d+$/.test(fields.recipients ?? '')) return birdError(422, 9, 'no (correct) recipients found', 'recipients');
  if (failure === 'http') return birdError(422, 25, 'Not enough balance', null);
  if (failure === 'echo') {
    const sms = echoed('messagebird', hex(16), fields.recipients, fields.body, { accessKey: key }, path, fields);
    return { ...birdError(422, 9, `body is invalid: ${sms.body}`, 'body'), sms };
  }
  const id = hex(16);
  const now = new Date().toISOString();
  // 'status': the message is created (201) but went to nobody, e.g. a recipient MessageBird will not deliver to.
  const sent = failure === 'status' ? 0 : 1;
  const json = {
    id,
    href: `https://rest.messagebird.com/messages/${id}`,
    direction: 'mt',
    type: fields.type ?? 'sms',
    originator: fields.originator,
    body: fields.body,
    datacoding: fields.datacoding ?? 'plain',
    mclass: 1,
    createdDatetime: now,
    recipients: {
      totalCount: 1,
      totalSentCount: sent,
      totalDeliveredCount: 0,
      totalDeliveryFailedCount: 1 - sent,
      items: [{ recipient: Number(fields.recipients), status: sent ? 'sent' : 'delivery_failed', statusDatetime: now }],
    },
  };
  return {
    status: 201,
    json,
    sms: sent
      ? { gateway: 'messagebird', id, to: fields.recipients, body: fields.body, channel: 'sms', auth: { accessKey: key }, path, fields }
      : undefined,
  };
}

let textlocalId = 1151346216;
const textlocalError = (code: number, message: string, status = 200): FakeReply => ({
  status,
  json: { errors: [{ code, message }], status: 'failure' },
});

export function textlocal({ fields, path, failure }: FakeRequest): FakeReply {
  if (!fields.apikey) return textlocalError(3, 'Invalid login details');
  if (!fields.numbers) return textlocalError(4, 'No recipients specified');
  if (!fields.message) return textlocalError(5, 'No message content');
  if (failure === 'template') return textlocalError(80, 'Invalid template');
  if (failure === 'echo') {
    const sms = echoed('textlocal', '', fields.numbers, fields.message, { apikey: fields.apikey }, path, fields);
    return { ...textlocalError(6, `Message too long: ${sms.body}`), sms };
  }
  if (failure) return textlocalError(7, 'Insufficient credits to send message', failure === 'http' ? 503 : 200);
  const id = String(textlocalId++);
  const json = {
    balance: 1162,
    batch_id: randomInt(1e8, 1e9),
    cost: 1,
    num_messages: 1,
    message: { num_parts: 1, sender: fields.sender, content: fields.message },
    receipt_url: '',
    custom: '',
    messages: [{ id, recipient: Number(fields.numbers) }],
    status: 'success',
  };
  return {
    status: 200,
    json,
    sms: {
      gateway: 'textlocal',
      id,
      to: fields.numbers,
      body: fields.message,
      channel: 'sms',
      auth: { apikey: fields.apikey },
      path,
      fields,
    },
  };
}

const vonageError = (status: string, text: string, http = 200): FakeReply => ({
  status: http,
  json: { 'message-count': '1', messages: [{ status, 'error-text': text }] },
});

export function vonage({ fields, path, failure }: FakeRequest): FakeReply {
  if (!fields.api_key) return vonageError('2', 'Missing api_key');
  if (!fields.api_secret) return vonageError('2', 'Missing api_secret');
  if (!fields.from) return vonageError('2', 'Missing from param');
  if (!fields.to) return vonageError('2', 'Missing to param');
  if (!fields.text) return vonageError('2', 'Missing text param');
  if (failure === 'echo') {
    const auth = { api_key: fields.api_key, api_secret: fields.api_secret };
    return { ...vonageError('4', `Invalid text: ${fields.text}`), sms: echoed('vonage', '', fields.to, fields.text, auth, path, fields) };
  }
  if (failure)
    return vonageError(
      failure === 'http' ? '5' : '9',
      failure === 'http' ? 'Internal Error' : 'Partner quota exceeded',
      failure === 'http' ? 500 : 200,
    );
  const id = randomUUID();
  const json = {
    'message-count': '1',
    messages: [{ to: fields.to, 'message-id': id, status: '0', 'remaining-balance': '10.00', 'message-price': '0.03', network: '23410' }],
  };
  return {
    status: 200,
    json,
    sms: {
      gateway: 'vonage',
      id,
      to: fields.to,
      body: fields.text,
      channel: 'sms',
      auth: { api_key: fields.api_key, api_secret: fields.api_secret },
      path,
      fields,
    },
  };
}

/** The message an 'echo' failure refused, recorded all the same (FailureKind). */
function echoed(
  gateway: GatewayName,
  id: string,
  to: string,
  body: string,
  auth: Record<string, string>,
  path: string,
  fields: Record<string, string>,
): FakeSms {
  return { gateway, id, to, body, channel: 'sms', auth, path, fields };
}
