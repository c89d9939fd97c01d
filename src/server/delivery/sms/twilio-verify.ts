// Twilio Verify (docs/sms.md#twilio-verify): Twilio generates, sends and checks the code itself, so nothing is
// stored on our side and verification goes back to Twilio. Basic auth (AccountSid, AuthToken).
//   POST /v2/Services/{ServiceSid}/Verifications      To=+<phone>, Channel  → 201 {sid, status:'pending'}
//   POST /v2/Services/{ServiceSid}/VerificationCheck  To=+<phone>, Code     → 200 {status, valid}
import type { Config } from '../../config/types.js';
import { basicAuth, field, joinUrl, postForm, unexpectedAnswer, type GatewayClient } from './http.js';
import { requireChannel, type SmsSender } from './sender.js';
import { twilioError } from './twilio.js';

export function twilioVerifySender(config: Config['sms']['twilioVerify'], client: GatewayClient): SmsSender {
  const service = joinUrl(config.apiBaseUrl, `/v2/Services/${encodeURIComponent(config.messageServiceSid)}`);
  const auth = basicAuth(config.accountSid, config.authToken);
  const sender: SmsSender = {
    gateway: 'twilio_verify',
    channels: ['sms', 'whatsapp'],
    // The body and code are ours, but Twilio Verify sends its own message with its own code.
    async send(to, _body, channel) {
      requireChannel(sender, channel);
      const answer = await postForm(client, `${service}/Verifications`, { To: `+${to}`, Channel: channel }, auth);
      if (answer.status !== 200 && answer.status !== 201) throw twilioError('twilio_verify', answer);
      const sid = field(answer.json, 'sid');
      if (typeof sid !== 'string') throw unexpectedAnswer('twilio_verify', answer);
      return { messageId: sid };
    },
    async verifyOtp(to, code) {
      const answer = await postForm(client, `${service}/VerificationCheck`, { To: `+${to}`, Code: code }, auth);
      // 404 (Twilio error 20404): no pending verification for this number, i.e. expired or used up.
      if (answer.status === 404) return false;
      if (answer.status !== 200 && answer.status !== 201) throw twilioError('twilio_verify', answer);
      return field(answer.json, 'status') === 'approved' && field(answer.json, 'valid') === true;
    },
  };
  return sender;
}
