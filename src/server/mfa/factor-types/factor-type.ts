// What a factor type is (docs/mfa.md#adding-a-factor-type). The flows in src/server/mfa/ (enroll,
// challenge, verify, unenroll) do everything common to all types — the switches, the checks and their
// errors in the original's order, the rows, the audit, the session upgrade — and ask the type only what
// differs: what enrolment stores and answers, what a challenge stores, sends and answers, and whether a
// verification attempt succeeds. Register a new type in ./index.ts.
import type pg from 'pg';
import type { FactorRow } from '../../../db/mfa-factors.js';
import type { ChallengeRow } from '../../../db/mfa-challenges.js';
import type { UserRow } from '../../../db/users.js';
import type { AppContext } from '../../context.js';
import type { ErrorName } from '../../errors.js';
import type { ApiRequest, JsonObject } from '../../http/types.js';
import type { FactorTypeSwitches } from '../../config/types.js';

export interface EnrollInput {
  ctx: AppContext;
  req: ApiRequest;
  user: UserRow;
  /** the new factor's id, chosen before the row exists (secrets are sealed to it) */
  factorId: string;
  friendlyName: string;
  body: JsonObject;
}

export interface EnrollPlan {
  /** the type's columns of the new mfa_factors row */
  columns: { secret?: string | null; phone?: string | null };
  /** the answer's fields besides id, type and friendly_name (e.g. totp: {qr_code, secret, uri}) */
  answer: JsonObject;
  /**
   * Runs in the enrolment's transaction, on the user's locked factors, before the common checks (name,
   * counts, aal); returns the factors those checks should count. Phone: a verified factor for the same
   * number refuses, unverified ones for it are deleted.
   */
  beforeChecks?(q: pg.PoolClient, factors: FactorRow[]): Promise<FactorRow[]>;
}

export interface ChallengeInput {
  ctx: AppContext;
  req: ApiRequest;
  user: UserRow;
  /** the factor, locked for the transaction */
  factor: FactorRow;
  challengeId: string;
  body: JsonObject;
  /** the challenge's transaction (a sendingTx; the phone type's codes are not counted against RATE_LIMIT_SMS_SENT) */
  q: pg.PoolClient;
}

export interface ChallengePlan {
  /** the type's columns of the new mfa_challenges row */
  columns: { otpCode?: string | null; webAuthnSessionData?: unknown };
  /** the answer's fields besides id, type and expires_at (e.g. webauthn: {type, credential_options}) */
  answer?: JsonObject;
}

export interface VerifyInput {
  ctx: AppContext;
  req: ApiRequest;
  user: UserRow;
  factor: FactorRow;
  /** checked already: this factor's, from the caller's address, not verified, not expired */
  challenge: ChallengeRow;
  body: JsonObject;
}

export interface VerifyOutcome {
  /**
   * Runs first in the upgrade's transaction: writes what the success changes on the factor (TOTP: the
   * time step spent; webauthn: the credential) and returns false when the attempt must fail after all
   * (TOTP: the code's time step was already spent by a concurrent request).
   */
  commit?(q: pg.PoolClient): Promise<boolean>;
}

export interface FactorType {
  /** mfa_factors.factor_type and the answers' `type` */
  readonly name: string;
  /** the AMR method a verification adds to the session (REFERENCE §3.1) */
  readonly amrMethod: string;
  /** the errors when the type's enrolment or verification is switched off */
  readonly disabled: { enroll: ErrorName; verify: ErrorName };
  /** the error of a wrong code or assertion */
  readonly failed: ErrorName;
  /** whether the type needs `code` in the verify body (webauthn sends an assertion instead) */
  readonly needsCode: boolean;
  /**
   * How a successful verification spends its challenge, as the original does per type: codes' challenges
   * are marked verified (a replay is refused as "from another address"), a WebAuthn ceremony's is deleted
   * (a replay finds no challenge).
   */
  readonly spendsChallengeBy: 'marking' | 'deleting';
  /**
   * Whether a challenge parses its body, as the original does per type: phone (its channel) and webauthn do,
   * so a body that is not a JSON object is 400 there; a TOTP challenge never reads one.
   */
  readonly readsChallengeBody: boolean;
  /** Whether the enrolment's audit entry names the type (factor_type) beside factor_id: the original's phone and webauthn entries do, TOTP's not. */
  readonly auditsTypeAtEnrolment: boolean;
  switches(ctx: AppContext): FactorTypeSwitches;
  /**
   * The verify body's own checks, run before the challenge is looked up, as the original orders them
   * (webauthn: its `webauthn` parameters, and the relying party's settings). Throws the first refusal.
   */
  checkVerifyBody?(ctx: AppContext, body: JsonObject): void;
  /** Validates the enrolment body and prepares the row; no database writes here. */
  enroll(input: EnrollInput): EnrollPlan | Promise<EnrollPlan>;
  challenge(input: ChallengeInput): ChallengePlan | Promise<ChallengePlan>;
  /** Throws the type's `failed` error (or a more precise one) when the attempt fails; may do network I/O (no transaction is open). */
  verify(input: VerifyInput): VerifyOutcome | Promise<VerifyOutcome>;
}
