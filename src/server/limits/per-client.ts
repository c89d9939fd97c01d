// Per-client request limits (docs/api.md#per-client-limits-and-captcha): token buckets keyed by the first value of the header named
// by RATE_LIMIT_HEADER (the proxy's client address), kept in Postgres so every thread and instance
// shares them. Without that header there is no client key and no limit, as in the original.
import { apiError } from '../errors.js';
import { takeFromBucket } from '../../db/rate-limits.js';
import { canonicalAddress } from '../http/client-address.js';
import type { Config } from '../config/types.js';
import type { ApiRequest, BucketChoice, Run } from '../http/types.js';
import { SIGN_IN_GRANTS } from '../observability/metrics.js';

import { CLIENT_BUCKETS, type ClientBucket } from '../auth/principal.js';
import type { AppContext } from '../context.js';

export type { ClientBucket };

const BURST = 30;

/** Requests per refill period for a bucket, and that period in seconds. */
function rateOf(bucket: ClientBucket, limits: Config['rateLimit']): { perPeriod: number; periodSeconds: number } {
  switch (bucket) {
    case 'token':
      return { perPeriod: limits.tokenRefresh, periodSeconds: 300 };
    case 'verify':
      return { perPeriod: limits.verify, periodSeconds: 300 };
    // One setting, a bucket each, as the original's separate limiters.
    case 'otp':
    case 'magiclink':
    case 'recover':
    case 'resend':
    case 'user_update':
    case 'signup':
      return { perPeriod: limits.otp, periodSeconds: 300 };
    case 'anonymous':
      return { perPeriod: limits.anonymousUsers, periodSeconds: 3600 };
    case 'mfa_challenge':
    case 'mfa_verify':
      return { perPeriod: limits.mfaChallengeAndVerify, periodSeconds: 60 };
    case 'passkey':
      return { perPeriod: limits.passkey, periodSeconds: 300 };
    case 'web3':
      return { perPeriod: limits.web3, periodSeconds: 300 };
    case 'sso':
      return { perPeriod: limits.sso, periodSeconds: 300 };
    case 'saml_assertion':
      return { perPeriod: limits.samlAssertion, periodSeconds: 300 };
    case 'oauth_client_register':
      return { perPeriod: limits.oauthClientRegister, periodSeconds: 300 };
  }
}

interface BucketShape {
  perPeriod: number;
  periodSeconds: number;
  /** how many tokens the bucket holds when full */
  burst: number;
  /** how many seconds each token takes to come back */
  secondsPerToken: number;
}

/** A bucket's rate, and the token bucket that rate makes. */
function shapeOf(bucket: ClientBucket, limits: Config['rateLimit']): BucketShape {
  const { perPeriod, periodSeconds } = rateOf(bucket, limits);
  // Anonymous sign-ins burst up to the whole part of their hourly rate, as the original.
  const burst = bucket === 'anonymous' ? Math.trunc(perPeriod) : BURST;
  return { perPeriod, periodSeconds, burst, secondsPerToken: periodSeconds / perPeriod };
}

/**
 * Each bucket's row key prefix and the seconds after its last take by which any of its rows is full again
 * (the background cleanup, cleanup/plan.ts): removed then, a row is what a client's first request would
 * insert, so removing it changes no answer. A bucket whose rate is 0 takes nothing and is left out.
 */
export function refilledAfter(limits: Config['rateLimit']): { prefix: string; seconds: number }[] {
  return CLIENT_BUCKETS.flatMap((bucket) => {
    const { perPeriod, burst, secondsPerToken } = shapeOf(bucket, limits);
    return perPeriod > 0 ? [{ prefix: `${bucket}:`, seconds: Math.ceil(burst * secondsPerToken) }] : [];
  });
}

/**
 * The client key: with SECURITY_SB_FORWARDED_FOR_ENABLED, the leftmost address of Sb-Forwarded-For (the
 * header Supabase's own proxy sets) when it is one, in the form Go writes it, so that spellings of one
 * address (case, zeros, IPv4-mapped) share a bucket as in the original; else the first value of the
 * RATE_LIMIT_HEADER header, as given, as the original chooses.
 */
function clientKey(req: ApiRequest, config: Pick<Config, 'rateLimit' | 'security'>): string | undefined {
  const firstValue = (name: string) => req.headers[name.toLowerCase()]?.split(',')[0]?.trim();
  if (config.security.sbForwardedForEnabled) {
    const forwarded = firstValue('sb-forwarded-for');
    const address = forwarded && canonicalAddress(forwarded);
    if (address) return address;
  }
  const header = config.rateLimit.header;
  return header ? firstValue(header) : undefined;
}

/** Wraps a route (http/dispatch.ts) so that each client key may call it at the bucket's rate. */
export function limited(bucketOf: ClientBucket | BucketChoice, handler: Run): Run {
  return async (req, ctx) => {
    await takeClientLimit(bucketOf, req, ctx);
    return handler(req, ctx);
  };
}

/** Takes one call from the client's bucket, or throws 429 over_request_rate_limit when it is empty. */
export async function takeClientLimit(bucketOf: ClientBucket | BucketChoice, req: ApiRequest, ctx: AppContext): Promise<void> {
  const key = clientKey(req, ctx.config);
  const bucket = key && (typeof bucketOf === 'function' ? bucketOf(req, ctx) : bucketOf);
  if (bucket) {
    const { perPeriod, periodSeconds, burst, secondsPerToken } = shapeOf(bucket, ctx.config.rateLimit);
    const allowed = perPeriod > 0 && (await takeFromBucket(ctx.db, `${bucket}:${key}`, burst, secondsPerToken));
    // A denied bucket holds less than one token: one more arrives within a token's period.
    if (!allowed) {
      ctx.metrics.rateLimited(bucket);
      // A sign-in refused here never reaches its grant: it is one of the sign-in outcomes too.
      const grant = bucket === 'token' || bucket === 'web3' ? req.form.get('grant_type') : null;
      if (grant && SIGN_IN_GRANTS.has(grant)) ctx.metrics.signIn(grant, 'over_request_rate_limit');
      throw apiError('over_request_rate_limit').retryAfter(perPeriod > 0 ? periodSeconds / perPeriod : periodSeconds);
    }
  }
}
