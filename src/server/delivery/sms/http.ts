// The one HTTP call every gateway makes: a form POST within INTERNAL_HTTP_TIMEOUT (docs/sms.md#gateways),
// as the original bounds its gateway clients. Network failures and timeouts become SmsSendError here, so
// gateway modules only interpret answers. A redirect is not followed: a 307 or 308 would have the form,
// with Textlocal's and Vonage's keys and the text holding the code, posted again wherever it points (as the
// original's Go client does); the 3xx is an answer no gateway gives, so the send fails instead.
import type { SmsGatewayName } from '../../config/types.js';
import { readCappedJson } from '../../outbound-body.js';
import { SmsSendError } from './sender.js';

/** A gateway's answer is a small JSON object; anything past this is not read. */
const SMS_ANSWER_MAX_BYTES = 64 * 1024;

export interface GatewayAnswer {
  status: number;
  /** the parsed JSON body, or undefined when the body was not JSON */
  json: unknown;
}

/** A gateway's endpoint: its name for messages, and how long a call to it may take. */
export interface GatewayClient {
  gateway: SmsGatewayName;
  timeoutSeconds: number;
}

export async function postForm(
  { gateway, timeoutSeconds }: GatewayClient,
  url: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<GatewayAnswer> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', ...headers },
      body: new URLSearchParams(fields).toString(),
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutSeconds * 1000),
    });
    const json = await readCappedJson(
      response,
      SMS_ANSWER_MAX_BYTES,
      () => new Error(`the answer is larger than ${SMS_ANSWER_MAX_BYTES} bytes`),
    );
    return { status: response.status, json };
  } catch (err) {
    const reason = (err as Error).name === 'TimeoutError' ? `no answer within ${timeoutSeconds} s` : (err as Error).message;
    throw new SmsSendError(gateway, `${gateway} request failed: ${reason}`, undefined, { cause: err });
  }
}

/** `https://host/` + `/path` without doubling the slash (base URLs come from configuration). */
export function joinUrl(base: string, path: string): string {
  return base.replace(/\/+$/, '') + path;
}

export function basicAuth(user: string, password: string): Record<string, string> {
  return { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` };
}

/** A field of a JSON object answer, or undefined (answers are untrusted input). */
export function field(json: unknown, name: string): unknown {
  return json !== null && typeof json === 'object' ? (json as Record<string, unknown>)[name] : undefined;
}

/** A field as text for an error message: scalars as they are, anything else as JSON, `fallback` when absent. */
export function fieldText(json: unknown, name: string, fallback: string): string {
  const value = field(json, name);
  if (value === undefined || value === null) return fallback;
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value);
}

export function unexpectedAnswer(gateway: SmsGatewayName, answer: GatewayAnswer): SmsSendError {
  return new SmsSendError(gateway, `${gateway} gave an unexpected answer (HTTP ${answer.status})`, answer.status);
}
