// grant_type=web3 (docs/web3.md): Sign-In with Solana or Ethereum. The wallet signed a SIWS/SIWE message
// naming this site; the message is parsed, its signature verified against its address, its URI, domain
// and time window checked, and the address signs in as the user of identity web3:<chain>:<address>
// (created on first sign-in, no email). Refusals follow the original: 422 web3_provider_disabled and
// 400 web3_unsupported_chain / validation_failed as {code, error_code, msg}; a message that does not hold
// up is an OAuth-style 400 invalid_grant.
import { createHash } from 'node:crypto';
import { apiError } from '../errors.js';
import { claimWeb3Message } from '../../db/web3-message-uses.js';
import { ZERO_TIME } from '../go-time.js';
import { writeAudit } from '../../db/audit-log.js';
import { issueSession, issuingTx } from '../sessions/issue.js';
import { actorOf } from '../users/actor.js';
import { requestAudience } from '../auth/bearer.js';
import { grantSchema } from '../http/validate.js';
import { signInExternal } from '../oauth/linking.js';
import { CHAINS, type Chain } from '../web3/chains.js';
import { MessageRefusal, parseMessage, type SignInMessage } from '../web3/message.js';
import { checkAudience, checkTimes } from '../web3/checks.js';
import { OAuthRefusal, refusalResponse } from './oauth-refusal.js';
import type { ApiRequest, JsonObject } from '../http/types.js';
import type { AppContext } from '../context.js';
import type { Grant } from './grant.js';

const fields = grantSchema('chain', 'message', 'signature');
const MIN_MESSAGE_BYTES = 64;
const MAX_MESSAGE_BYTES = 20 * 1024;

export const web3: Grant<JsonObject> = {
  grantType: 'web3',
  // With both chains off the answer is web3_provider_disabled whatever the body holds, even one that is no JSON.
  beforeBody(ctx) {
    const { web3Solana, web3Ethereum } = ctx.config.external;
    if (!web3Solana.enabled && !web3Ethereum.enabled) throw apiError('web3_provider_disabled');
  },
  schema: (body) => body,
  async handle(req, ctx, body) {
    const params = fields(body);
    const chain = CHAINS.get(params.chain ?? '');
    if (!chain) throw apiError('web3_unsupported_chain');
    if (!chain.settings(ctx.config).enabled) throw apiError(chain.disabled);
    try {
      const message = verifiedMessage(chain, params.message ?? '', params.signature ?? '');
      checkAudience(message, chain.title, ctx.redirect);
      const { maximumValiditySeconds } = chain.settings(ctx.config);
      checkTimes(message, chain.title, maximumValiditySeconds, Date.now());
      return { body: await signIn(req, ctx, chain, message, usableUntil(message, maximumValiditySeconds)) };
    } catch (err) {
      if (err instanceof OAuthRefusal) return refusalResponse(err, req);
      throw err;
    }
  },
};

/** The parsed message, once its signature is known to be its address's. */
function verifiedMessage(chain: Chain, text: string, signature: string): SignInMessage {
  const bytes = Buffer.byteLength(text);
  if (bytes < MIN_MESSAGE_BYTES) throw apiError('validation_failed', 'message is too short');
  if (bytes > MAX_MESSAGE_BYTES) throw apiError('validation_failed', 'message must not exceed 20KB');
  const decoded = chain.decodeSignature(signature);
  let message: SignInMessage;
  try {
    message = parseMessage(text, chain.rules);
  } catch (err) {
    if (err instanceof MessageRefusal) throw apiError('validation_failed', err.message);
    throw err;
  }
  if (!chain.verify(message, decoded)) throw new OAuthRefusal('invalid_grant', 'Signature does not match address in message');
  return message;
}

/** Until when the message could pass the time checks: its Expiration Time or Issued At + the validity, the earlier. */
function usableUntil(message: SignInMessage, maximumValiditySeconds: number): Date {
  const end = message.issuedAt + maximumValiditySeconds * 1000;
  return new Date(message.expirationTime !== null && message.expirationTime !== ZERO_TIME ? Math.min(end, message.expirationTime) : end);
}

/**
 * The address's user (a new one unless DISABLE_SIGNUP), a session with AMR web3, and the original's two
 * `login` audit entries: its account step's, naming the provider alone, then the grant's, naming the
 * chain, network, address, domain and URI. identity_data and user_metadata carry what the original
 * stores: sub, custom_claims {address, chain, network, domain, statement}, email_verified and
 * phone_verified false.
 */
async function signIn(req: ApiRequest, ctx: AppContext, chain: Chain, message: SignInMessage, until: Date) {
  const subject = `web3:${chain.name}:${message.address}`;
  const customClaims = {
    address: message.address,
    chain: chain.name,
    network: message.chainId,
    domain: message.domain,
    statement: message.statement,
  };
  const claims = { sub: subject, custom_claims: customClaims, email_verified: false, phone_verified: false };
  return issuingTx(
    ctx,
    async (c) => {
      // docs/web3.md#replay: a signed message signs in once (the original accepts it again while it is valid).
      const hash = createHash('sha256').update(message.raw).digest();
      if (!(await claimWeb3Message(c, hash, until)))
        throw new OAuthRefusal('invalid_grant', `Signed ${chain.title} message was already used`);
      const { user } = await signInExternal(ctx, c, {
        provider: 'web3',
        profile: { subject, emails: [], claims },
        linkingTargetId: null,
        emailOptional: true,
        aud: requestAudience(req, ctx),
        hookRequest: req,
      });
      // An identity without an address is audited as a login whether the account is new or not.
      await writeAudit(c, req, actorOf(user), 'login', { provider: 'web3' });
      const traits = {
        provider: 'web3',
        chain: chain.name,
        network: message.chainId,
        address: message.address,
        domain: message.domain,
        uri: message.uri.text,
      };
      return issueSession(ctx, c, user, 'web3', req, { audit: { actor: actorOf(user), action: 'login', traits } });
    },
    req.signal,
  );
}
