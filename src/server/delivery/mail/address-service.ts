// MAILER_EMAIL_VALIDATION_SERVICE_URL (docs/one-time-codes-and-mail.md#address-validation): an outside service
// asked about each recipient, in the original's wire format: POST {"email": "..."} as JSON, answered by
// {"valid": true|false}. Only an explicit `"valid": false` refuses; a service that is down, slow, answers
// non-2xx or something unreadable lets the address through, so it can never stop mail altogether.
import { readCappedJson } from '../../outbound-body.js';
import type { SmtpHeaders } from './smtp-headers.js';

/** The answer is a few bytes; a service sending more than this is not read further. */
const ANSWER_MAX_BYTES = 4096;

/** true when the service says the address is invalid; false for every other outcome. */
export async function serviceRefuses(url: string, headers: SmtpHeaders, address: string, signal: AbortSignal): Promise<boolean> {
  const sent = new Headers({ 'content-type': 'application/json' });
  for (const [name, values] of Object.entries(headers)) {
    // As the original: each value replaces the one before, so the last of a list is sent.
    for (const value of values) {
      try {
        sent.set(name, value);
      } catch {
        // a header name or value fetch cannot send is left out, as a bad setting must not stop mail
      }
    }
  }
  try {
    const res = await fetch(url, { method: 'POST', headers: sent, body: JSON.stringify({ email: address }), signal });
    if (res.status < 200 || res.status > 299) {
      await res.body?.cancel();
      return false;
    }
    const answer = await readCappedJson(res, ANSWER_MAX_BYTES, () => new Error('answer too large'));
    return typeof answer === 'object' && answer !== null && (answer as { valid?: unknown }).valid === false;
  } catch {
    return false;
  }
}
