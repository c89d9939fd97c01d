// MessageBird (docs/sms.md#messagebird): POST /messages with `Authorization: AccessKey <key>`. Answers 201 with
// the message (`id`, and `recipients.totalSentCount`); errors are `{errors: [{code, description, parameter}]}`
// with a 4xx status.
import type { Config } from '../../config/types.js';
import { field, fieldText, joinUrl, postForm, unexpectedAnswer, type GatewayClient } from './http.js';
import { requireChannel, SmsSendError, type SmsSender } from './sender.js';

export function messagebirdSender(config: Config['sms']['messagebird'], client: GatewayClient): SmsSender {
  const url = joinUrl(config.apiBaseUrl, '/messages');
  const headers = { authorization: `AccessKey ${config.accessKey}` };
  const sender: SmsSender = {
    gateway: 'messagebird',
    channels: ['sms'],
    async send(to, body, channel) {
      requireChannel(sender, channel);
      const fields = { originator: config.originator, body, recipients: to, type: 'sms', datacoding: 'unicode' };
      const answer = await postForm(client, url, fields, headers);
      if (answer.status < 200 || answer.status > 299) {
        const errors = field(answer.json, 'errors');
        if (!Array.isArray(errors) || errors.length === 0) throw unexpectedAnswer('messagebird', answer);
        // The first error's description alone, as the original reports it (docs/sms.md#messagebird).
        throw new SmsSendError('messagebird', fieldText(errors[0], 'description', ''), answer.status);
      }
      // A 2xx can still mean nobody got it: MessageBird reports how many recipients it sent to, and the
      // original counts a message sent to none (or an answer that does not say) as a failure.
      const sentCount = field(field(answer.json, 'recipients'), 'totalSentCount') ?? 0;
      if (typeof sentCount !== 'number') throw unexpectedAnswer('messagebird', answer);
      if (sentCount <= 0) throw new SmsSendError('messagebird', 'messagebird error: total sent count is 0', answer.status);
      const id = field(answer.json, 'id');
      if (typeof id !== 'string') throw unexpectedAnswer('messagebird', answer);
      return { messageId: id };
    },
  };
  return sender;
}
