// The original's MFA factors, their challenges and its passkeys move into ours (docs/adopting-gotrue.md#mfa-factors-and-passkeys).
// Adoption keeps those tables aside as gotrue_<name> because our counterparts only exist once migrations
// 00003 (mfa) and 00004 (passkeys) ran; migrate.ts calls this after them, in the adoption's own transaction
// (so any failure still leaves the original schema untouched), and on every later start while a
// gotrue_<name> source is left (a database adopted by a version without this step). The sources are
// dropped once their rows are in: they may hold TOTP secrets in clear, which must not stay behind.
import { copyAccess, dropUnusedTypes } from './adopt.js';
import { ident, outsideDependents, tablesIn, type Tx } from './adopt-catalog.js';
import { picker, runCount } from './adopt-data.js';

/**
 * Returns a stored secret sealed for its row in the format of src/server/mfa/encryption.ts; an envelope
 * (the original's, SECURITY_DB_ENCRYPTION, or ours) comes back unchanged.
 */
export type SecretSealer = (rowId: string, stored: string) => string;

const SOURCES = ['gotrue_mfa_factors', 'gotrue_mfa_challenges', 'gotrue_webauthn_credentials', 'gotrue_webauthn_challenges'];

/** True when a later start still has original MFA or passkey rows to move (the caller opens a transaction only then). */
export async function hasOriginalMfa(sql: Tx, schema: string): Promise<boolean> {
  return (await tablesIn(sql, schema)).some((t) => SOURCES.includes(t));
}

export async function takeOverOriginalMfa(
  tx: Tx,
  schema: string,
  seal: SecretSealer | undefined,
  note: (line: string) => void,
): Promise<void> {
  const present = (await tablesIn(tx, schema)).filter((t) => SOURCES.includes(t));
  if (present.length === 0) return;
  const blockers = (await Promise.all(present.map((t) => outsideDependents(tx, schema, t)))).flat();
  if (blockers.length > 0) {
    throw new Error(`objects outside "${schema}" depend on the original's MFA tables, which are moved and dropped: ${blockers.join('; ')}`);
  }
  const report = (what: string, count: number) => note(`${what}: ${count} rows`);
  if (present.includes('gotrue_mfa_factors')) {
    report('MFA factors copied', await copyFactors(tx, schema));
    report('TOTP secrets sealed', await sealClearValues(tx, 'mfa_factors', 'secret', 'gotrue_mfa_factors', seal));
    await copyAccess(tx, schema, 'gotrue_mfa_factors', 'mfa_factors');
    if (present.includes('gotrue_mfa_challenges')) {
      report('MFA challenges copied', await copyChallenges(tx, schema));
      report('phone challenge codes sealed', await sealClearValues(tx, 'mfa_challenges', 'otp_code', 'gotrue_mfa_challenges', seal));
      await copyAccess(tx, schema, 'gotrue_mfa_challenges', 'mfa_challenges');
    }
  }
  if (present.includes('gotrue_webauthn_credentials')) {
    report('passkeys copied', await copyPasskeys(tx));
    await copyAccess(tx, schema, 'gotrue_webauthn_credentials', 'webauthn_credentials');
  }
  // One statement, so the foreign key between the sources does not decide an order.
  await tx.unsafe(`drop table ${present.map(ident).join(', ')} cascade`);
  note(`moved into ours and dropped: ${present.join(', ')}`);
  await dropUnusedTypes(tx, schema);
}

/**
 * Factors of every type and status, ids kept (sessions.factor_id and the secrets' envelopes, which are
 * bound to the row id, stay valid). A webauthn factor's credential is converted from the original's
 * go-webauthn JSON (standard base64, camelCase) into our shape (src/db/mfa-webauthn.ts); the last
 * ceremony's data is not kept (ceremonies live minutes, and the original's shape is not ours).
 */
async function copyFactors(tx: Tx, schema: string): Promise<number> {
  const col = await picker(tx, schema, 'gotrue_mfa_factors');
  const c = `${col('web_authn_credential')}::jsonb`;
  const b64url = (expr: string) => `rtrim(translate(${expr}, '+/', '-_'), '=')`;
  const credential = `case when ${c} is null or jsonb_typeof(${c}) <> 'object' then null
    when ${c} ? 'credential_id' then ${c}
    else jsonb_build_object(
      'credential_id', ${b64url(`${c} ->> 'id'`)},
      'public_key', ${b64url(`${c} ->> 'publicKey'`)},
      'sign_count', coalesce((${c} -> 'authenticator' ->> 'signCount')::bigint, 0),
      'transports', case when jsonb_typeof(${c} -> 'transport') = 'array' then ${c} -> 'transport' else '[]'::jsonb end,
      'attestation_type', coalesce(${c} ->> 'attestationType', ''),
      'backup_eligible', coalesce((${c} -> 'flags' ->> 'backupEligible')::boolean, false),
      'backed_up', coalesce((${c} -> 'flags' ->> 'backupState')::boolean, false)) end`;
  return runCount(
    tx,
    `insert into mfa_factors (id, user_id, friendly_name, factor_type, status, created_at, updated_at, secret, phone,
                              last_challenged_at, web_authn_credential, web_authn_aaguid)
     select o.id, o.user_id, o.friendly_name, o.factor_type::text, o.status::text, coalesce(o.created_at, now()),
            coalesce(o.updated_at, o.created_at, now()), nullif(o.secret, ''), nullif(ltrim(${col('phone')}, '+'), ''),
            ${col('last_challenged_at')}, ${credential}, ${col('web_authn_aaguid')}
     from gotrue_mfa_factors o join users u on u.id = o.user_id
     on conflict (id) do nothing`,
  );
}

/**
 * Challenges of TOTP and phone factors, so one issued just before the move still verifies (from the same
 * address, as the original required too). WebAuthn ceremonies in flight are left out: their session
 * data is in the original's shape, and the client starts a new one.
 */
async function copyChallenges(tx: Tx, schema: string): Promise<number> {
  const col = await picker(tx, schema, 'gotrue_mfa_challenges');
  return runCount(
    tx,
    `insert into mfa_challenges (id, factor_id, created_at, verified_at, ip_address, otp_code)
     select o.id, o.factor_id, coalesce(o.created_at, now()), o.verified_at, coalesce(host(o.ip_address::inet), ''),
            nullif(${col('otp_code')}, '')
     from gotrue_mfa_challenges o join mfa_factors f on f.id = o.factor_id
     where ${col('web_authn_session_data')} is null
     on conflict (id) do nothing`,
  );
}

/** The original's passkeys table has our shape column for column (both follow its migration). */
async function copyPasskeys(tx: Tx): Promise<number> {
  return runCount(
    tx,
    `insert into webauthn_credentials (id, user_id, credential_id, public_key, attestation_type, aaguid, sign_count, transports,
                                       backup_eligible, backed_up, friendly_name, created_at, updated_at, last_used_at)
     select o.id, o.user_id, o.credential_id, o.public_key, coalesce(o.attestation_type, ''), o.aaguid, coalesce(o.sign_count, 0),
            coalesce(o.transports, '[]'), coalesce(o.backup_eligible, false), coalesce(o.backed_up, false),
            coalesce(o.friendly_name, ''), coalesce(o.created_at, now()), coalesce(o.updated_at, o.created_at, now()), o.last_used_at
     from gotrue_webauthn_credentials o join users u on u.id = o.user_id
     on conflict do nothing`,
  );
}

/**
 * The original stores TOTP secrets (and phone codes) in clear unless SECURITY_DB_ENCRYPTION was on; each
 * value copied from `source` is sealed for its row. Values the original sealed are left as they are: they
 * open here with the same SECURITY_DB_ENCRYPTION keys (docs/mfa.md#secrets-at-rest).
 */
export async function sealClearValues(
  tx: Tx,
  table: string,
  column: string,
  source: string,
  seal: SecretSealer | undefined,
): Promise<number> {
  const rows = await tx.unsafe<{ id: string; value: string }[]>(
    `select t.id, t.${column} as value from ${ident(table)} t where t.${column} is not null
       and exists (select 1 from ${ident(source)} o where o.id = t.id)`,
  );
  const ids: string[] = [];
  const values: string[] = [];
  for (const row of rows) {
    if (!seal) {
      throw new Error(
        `${table}.${column} holds values in clear and no key was given to seal them (SECURITY_DB_ENCRYPTION_* or JWT_SECRET)`,
      );
    }
    const sealed = seal(row.id, row.value);
    if (sealed === row.value) continue;
    ids.push(row.id);
    values.push(sealed);
  }
  if (ids.length === 0) return 0;
  return runCount(
    tx,
    `update ${ident(table)} t set ${column} = v.value from unnest($1::uuid[], $2::text[]) as v(id, value) where t.id = v.id`,
    [ids, values],
  );
}
