// Twilio Programmable Messaging (docs/sms.md#twilio): POST /2010-04-01/Accounts/{AccountSid}/Messages.json
// with HTTP Basic (AccountSid, AuthToken). Answers 201 with the message resource, whose `sid` is the
// message id; a created message can already be `failed`/`undelivered`, which is a failure too.
import type { Config } from '../../config/types.js';
import { basicAuth, field, fieldText, joinUrl, postForm, unexpectedAnswer, type GatewayAnswer, type GatewayClient } from './http.js';
import { requireChannel, SmsSendError, type SmsSender } from './sender.js';

export function twilioSender(config: Config['sms']['twilio'], client: GatewayClient): SmsSender {
  const url = joinUrl(config.apiBaseUrl, `/2010-04-01/Accounts/${encodeURIComponent(config.accountSid)}/Messages.json`);
  const auth = basicAuth(config.accountSid, config.authToken);
  const sender: SmsSender = {
    gateway: 'twilio',
    channels: ['sms', 'whatsapp'],
    async send(to, body, channel, otp) {
      requireChannel(sender, channel);
      const fields =
        channel === 'whatsapp'
          ? whatsappFields(config, to, body, otp)
          : { To: `+${to}`, Channel: channel, From: config.messageServiceSid, Body: body };
      const answer = await postForm(client, url, fields, auth);
      if (answer.status !== 200 && answer.status !== 201) throw twilioError('twilio', answer);
      const sid = field(answer.json, 'sid');
      if (typeof sid !== 'string') throw unexpectedAnswer('twilio', answer);
      const status = field(answer.json, 'status');
      if (status === 'failed' || status === 'undelivered') {
        // The original's words (docs/sms.md#twilio); an absent field is left empty, as there.
        const reason = `${fieldText(answer.json, 'error_message', '')} ${fieldText(answer.json, 'error_code', '')}`;
        throw new SmsSendError('twilio', `twilio error: ${reason} for message ${sid}`, answer.status);
      }
      return { messageId: sid };
    },
  };
  return sender;
}

// WhatsApp addresses carry a `whatsapp:` prefix; a sender that is a messaging-service SID does not.
// With SMS_TWILIO_CONTENT_SID, Twilio fills an approved WhatsApp template with the bare code.
function whatsappFields(config: Config['sms']['twilio'], to: string, body: string, otp: string): Record<string, string> {
  // A phone number as the original tells it from a SID: without its '+' and spaces; sent as it is written.
  const isNumber = /^[1-9][0-9]{1,14}$/.test(config.messageServiceSid.replace(/^\+/, '').replaceAll(' ', ''));
  const from = isNumber ? `whatsapp:${config.messageServiceSid}` : config.messageServiceSid;
  const fields: Record<string, string> = { To: `whatsapp:+${to}`, Channel: 'whatsapp', From: from };
  if (config.contentSid) {
    fields.ContentSid = config.contentSid;
    // Written as the original writes it, a space after the colon: the exact text Twilio has always been sent.
    fields.ContentVariables = `{"1": ${JSON.stringify(otp)}}`;
  } else {
    fields.Body = body;
  }
  return fields;
}

/** Twilio's error answer: `{code, message, more_info, status}` (both Messaging and Verify), in the original's words. */
export function twilioError(gateway: 'twilio' | 'twilio_verify', answer: GatewayAnswer): SmsSendError {
  const message = field(answer.json, 'message');
  if (typeof message !== 'string') return unexpectedAnswer(gateway, answer);
  return new SmsSendError(gateway, `${message} More information: ${fieldText(answer.json, 'more_info', '')}`, answer.status);
}
