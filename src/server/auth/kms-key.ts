// A JWT_KEYS entry whose private part lives in AWS KMS (docs/tokens-and-sessions.md#aws-kms-signing-keys):
// the RSA public JWK plus the member "aws:kms:arn". The region the signing calls go to is the ARN's, as the original.
import type { JsonWebKey } from 'node:crypto';

/** The JWK member naming the KMS key; never published (keys.ts publishes public members only). */
export const KMS_ARN_MEMBER = 'aws:kms:arn';

export interface KmsKeyRef {
  arn: string;
  region: string;
}

// arn:<partition>:kms:<region>:<account>:key/<id> or :alias/<name>; partitions aws, aws-cn, aws-us-gov, aws-iso...
const KMS_ARN = /^arn:aws[a-z-]*:kms:([a-z]{2}(?:-[a-z]+)+-\d+):\d{12}:(?:key|alias)\/[^\s/][^\s]*$/;

/**
 * The KMS key of an entry, or null for an ordinary JWK. Throws an Error saying what is wrong with a KMS
 * entry: the caller prefixes the key's name (keys.ts).
 */
export function kmsKeyOf(jwk: JsonWebKey): KmsKeyRef | null {
  if (!Object.hasOwn(jwk, KMS_ARN_MEMBER)) return null;
  const arn: unknown = jwk[KMS_ARN_MEMBER];
  if (typeof arn !== 'string') throw new Error(`"${KMS_ARN_MEMBER}" is not a string`);
  const match = KMS_ARN.exec(arn);
  if (!match) throw new Error(`"${KMS_ARN_MEMBER}" is not a KMS key ARN with a region (arn:aws:kms:<region>:<account>:key/<id>): "${arn}"`);
  if (jwk.kty !== 'RSA') throw new Error(`an AWS KMS key must be an RSA public JWK (kty "RSA"), not ${String(jwk.kty)}`);
  for (const member of ['n', 'e'] as const) {
    if (typeof jwk[member] !== 'string' || !jwk[member]) throw new Error(`an AWS KMS key needs the RSA public member "${member}"`);
  }
  if (jwk.alg !== undefined && jwk.alg !== 'RS256') throw new Error(`an AWS KMS key signs RS256 only, not ${JSON.stringify(jwk.alg)}`);
  return { arn, region: match[1] };
}
