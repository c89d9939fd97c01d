// Vonage (formerly Nexmo) SMS API (docs/sms.md#vonage): POST /sms/json with api_key/api_secret as form
// fields. Vonage answers HTTP 200 even when it refuses: each `messages[i].status` is "0" on success,
// otherwise `error-text` says why. Text outside ASCII must be flagged `type=unicode` or it is mangled.
import type { Config } from '../../config/types.js';
import { field, fieldText, joinUrl, postForm, unexpectedAnswer, type GatewayClient } from './http.js';
import { requireChannel, SmsSendError, type SmsSender } from './sender.js';

export function vonageSender(config: Config['sms']['vonage'], client: GatewayClient): SmsSender {
  const url = joinUrl(config.apiBaseUrl, '/sms/json');
  const sender: SmsSender = {
    gateway: 'vonage',
    channels: ['sms'],
    async send(to, body, channel) {
      requireChannel(sender, channel);
      const fields: Record<string, string> = { from: config.from, to, text: body, api_key: config.apiKey, api_secret: config.apiSecret };
      if ([...body].some((ch) => ch.charCodeAt(0) > 0x7f)) fields.type = 'unicode';
      const answer = await postForm(client, url, fields);
      const messages = field(answer.json, 'messages');
      const first: unknown = Array.isArray(messages) ? messages[0] : undefined;
      // The original's words (docs/sms.md#vonage); an absent field is left empty, as there.
      if (first === undefined) {
        if (answer.json === null || typeof answer.json !== 'object') throw unexpectedAnswer('vonage', answer);
        throw new SmsSendError('vonage', 'vonage error: Internal Error', answer.status);
      }
      if (field(first, 'status') !== '0') {
        const [text, status, id] = ['error-text', 'status', 'message-id'].map((name) => fieldText(first, name, ''));
        throw new SmsSendError('vonage', `vonage error: ${text} (status: ${status}) for message ${id}`, answer.status);
      }
      const id = field(first, 'message-id');
      if (typeof id !== 'string') throw unexpectedAnswer('vonage', answer);
      return { messageId: id };
    },
  };
  return sender;
}
