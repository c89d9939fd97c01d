// POST /magiclink (docs/api.md#post-magiclink), also the email half of POST /otp: a confirmed user gets a magic link
// (the recovery token); an unknown or unconfirmed address is signed up and gets the confirmation mail,
// whose link signs in just the same. The answer is always {} so it reveals nothing about the address.
import { ApiError, apiError } from '../errors.js';
import { findUserByEmail } from '../../db/users.js';
import { normaliseEmail } from '../users/addresses.js';
import { PKCE_FIELDS, readPkceParams } from '../verify/pkce-challenge.js';
import { bodySchema, type BodyOf } from '../http/validate.js';
import { requestAudience } from '../auth/bearer.js';
import { redirectTarget } from '../http/redirect-target.js';
import { sendLinkMail } from '../passwordless/link-mail.js';
import { signUpWithoutPassword } from '../users/signup.js';
import { goDecoderValue } from '../http/json-syntax-error.js';
import { parseJsonObject } from '../http/answer.js';
import { assertDecodesAsGo, fieldsNullEmpties } from '../http/go-field-types.js';
import { fieldNames, underFieldNames } from '../http/field-names.js';
import type { Handler, ApiRequest } from '../http/types.js';
import type { AppContext } from '../context.js';

const FIELDS = { email: 'string', ...PKCE_FIELDS, data: 'object' } as const;
export const magiclinkBody = bodySchema(FIELDS);
type MagicLinkBody = BodyOf<typeof FIELDS>;
const MAGIC_LINK_PARAMS = 'api.MagicLinkParams';
const FIELD_NAMES = fieldNames(Object.keys(FIELDS));

export const magiclink: Handler<MagicLinkBody> = async (req, ctx) => {
  assertMagicLinksEnabled(ctx); // before the body is read, as the original checks the provider first
  await sendMagicLink(req, ctx, magicLinkParams(req));
  return { body: {} };
};

function assertMagicLinksEnabled(ctx: AppContext): void {
  if (!ctx.config.external.emailEnabled) throw apiError('email_logins_disabled_422');
  if (!ctx.config.external.magicLinkEnabled) throw apiError('magic_link_disabled');
}

/**
 * The body as the original reads it here: with json.Decoder.Decode, which takes the first JSON value and
 * leaves whatever follows it unread, refusing an empty body ("EOF"); every refusal is worded "Could not read
 * verification params: …" rather than the common path's "Could not parse request body as JSON: …".
 */
const NOTHING = Buffer.alloc(0);

function magicLinkParams(req: ApiRequest): MagicLinkBody {
  // A body the request logger already read as a form is an empty one to the decoder (http/logger-form.ts).
  const raw = req.formTaken ? NOTHING : req.rawBody;
  const read = goDecoderValue(raw);
  if ('error' in read) throw unreadable(read.error);
  let value;
  try {
    value = parseJsonObject(raw.subarray(0, read.length), MAGIC_LINK_PARAMS);
    assertDecodesAsGo(value, MAGIC_LINK_PARAMS);
  } catch (err) {
    if (err instanceof ApiError && err.errorCode === 'bad_json') throw unreadable(err.message.replace(COMMON_WORDS, ''));
    throw err;
  }
  // Named as MagicLinkParams decodes them before the schema's check (a later null empties `data`).
  return magiclinkBody(underFieldNames(value, FIELD_NAMES, fieldsNullEmpties(MAGIC_LINK_PARAMS)));
}

const COMMON_WORDS = /^Could not parse request body as JSON: /;
const unreadable = (words: string) => apiError('bad_json', `Could not read verification params: ${words}`);

/**
 * Also the email half of POST /otp, with that route's body (a superset of this one's fields). `again`: the
 * user found was deleted before its row was locked, and the address is looked up once more.
 */
export async function sendMagicLink(req: ApiRequest, ctx: AppContext, body: MagicLinkBody, again = false): Promise<void> {
  assertMagicLinksEnabled(ctx);
  const rawEmail = body.email ?? '';
  if (!rawEmail) throw apiError('magic_link_email_required');
  const email = normaliseEmail(rawEmail);
  const pkce = readPkceParams(body);
  const aud = requestAudience(req, ctx);
  let user = await findUserByEmail(ctx.db, email, aud);
  // Under autoconfirm an unconfirmed user gets the magic link alone, as the original sends it one after
  // confirming it; here the link itself confirms the address when followed (a repeated sign-up confirms
  // nothing: docs/differences.md), so no second mail, nor the confirmation's interval, comes into it.
  if (!user || (!user.email_confirmed_at && !ctx.config.mailer.autoconfirm)) {
    await signUpWithoutPassword(req, ctx, { provider: 'email', address: email, data: body.data ?? {}, pkce });
    // With autoconfirm the sign-up confirmed the new address and sent nothing: send a real magic link now.
    if (!ctx.config.mailer.autoconfirm) return;
    user = await findUserByEmail(ctx.db, email, aud);
    if (!user) return;
  }
  const sent = await sendLinkMail(ctx, req, user.id, { kind: 'magicLink', redirectTo: redirectTarget(req, ctx), pkce });
  // Deleted (or soft-deleted) by a concurrent request since the lookup: the address is free now, and is
  // answered as an unknown address is, signed up and sent its confirmation, not with nothing sent at all.
  if (!sent && !again) await sendMagicLink(req, ctx, body, true);
}
