// The factor types this service knows, by mfa_factors.factor_type (docs/mfa.md#adding-a-factor-type).
// A type the original knows but that is not registered here answers as switched off.
import type { FactorType } from './factor-type.js';
import { totp } from './totp.js';
import { phone } from './phone.js';
import { webauthn } from './webauthn.js';

export type { FactorType } from './factor-type.js';

export const FACTOR_TYPES: ReadonlyMap<string, FactorType> = new Map([totp, phone, webauthn].map((t) => [t.name, t]));

/** The types the original accepts in `factor_type`; those without a module here are refused as disabled. */
export const KNOWN_FACTOR_TYPES = ['totp', 'phone', 'webauthn'] as const;
