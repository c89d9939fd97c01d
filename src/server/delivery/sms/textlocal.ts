// Textlocal (docs/sms.md#textlocal): POST /send with the key as the `apikey` form field. Textlocal answers
// HTTP 200 even when it refuses, so success is `status: "success"`, failures carry
// `{status: "failure", errors: [{code, message}]}`; the message id is `messages[0].id`.
import type { Config } from '../../config/types.js';
import { field, fieldText, joinUrl, postForm, unexpectedAnswer, type GatewayClient } from './http.js';
import { requireChannel, SmsSendError, type SmsSender } from './sender.js';

/** Textlocal's error for a message that matches none of the account's approved templates. */
const TEMPLATE_REFUSED = 80;
/** What a refused template's error says in place of the text sent (the SMS template with the code filled in). */
const TEMPLATE_REFUSED_SUBJECT = 'template message: (the text sent, not repeated: it holds the one-time code)';

export function textlocalSender(config: Config['sms']['textlocal'], client: GatewayClient): SmsSender {
  const url = joinUrl(config.apiBaseUrl, '/send');
  const sender: SmsSender = {
    gateway: 'textlocal',
    channels: ['sms'],
    async send(to, body, channel) {
      requireChannel(sender, channel);
      const fields = { sender: config.sender, apikey: config.apiKey, message: body, numbers: to };
      const answer = await postForm(client, url, fields);
      const messages = field(answer.json, 'messages');
      const id = Array.isArray(messages) ? field(messages[0], 'id') : undefined;
      const messageId = typeof id === 'string' || typeof id === 'number' ? String(id) : '';
      if (field(answer.json, 'status') !== 'success') {
        const errors = field(answer.json, 'errors');
        if (!Array.isArray(errors) || errors.length === 0) throw unexpectedAnswer('textlocal', answer);
        // The first error, in the original's words (docs/sms.md#textlocal), except for a refused template: the
        // original repeats the text sent, but that text carries the one-time code, and this message reaches
        // the client's answer and the request log. It says which text was refused without repeating it.
        const [text, code] = [fieldText(errors[0], 'message', ''), fieldText(errors[0], 'code', '')];
        const subject = code === String(TEMPLATE_REFUSED) ? TEMPLATE_REFUSED_SUBJECT : `message ${messageId}`;
        throw new SmsSendError('textlocal', `textlocal error: ${text} (code: ${code}) ${subject}`, answer.status);
      }
      // A success is a success, as the original takes it, even without a message id to report.
      return { messageId };
    },
  };
  return sender;
}
