// TOTP factors (RFC 6238): SHA-1, 6 digits, 30-second steps, one step of clock skew either way, as the
// original and every authenticator app. The secret is sealed at rest (../encryption.ts); a code is
// accepted once: its time step is recorded and that step, or an older one, is refused afterwards.
import { Secret, TOTP } from 'otpauth';
import { apiError } from '../../errors.js';
import { spendTotpStep, updateFactor } from '../../../db/mfa-factors.js';
import { secretBox } from '../encryption.js';
import type { FactorType } from './factor-type.js';
import { uriParts } from '../../oauth-server/uri-parts.js';

const PERIOD = 30;
const DIGITS = 6;
const WINDOW = 1;

const siteHost = (siteUrl: string) => uriParts(siteUrl)?.host || new URL(siteUrl).host;

function totpFor(secret: Secret | string, issuer: string, label: string): TOTP {
  return new TOTP({
    issuer,
    label,
    algorithm: 'SHA1',
    digits: DIGITS,
    period: PERIOD,
    secret: typeof secret === 'string' ? Secret.fromBase32(secret) : secret,
  });
}

export const totp: FactorType = {
  name: 'totp',
  amrMethod: 'totp',
  disabled: { enroll: 'mfa_totp_enroll_not_enabled', verify: 'mfa_totp_verify_not_enabled' },
  failed: 'mfa_totp_verification_failed',
  needsCode: true,
  spendsChallengeBy: 'marking',
  readsChallengeBody: false,
  auditsTypeAtEnrolment: false,
  switches: (ctx) => ctx.config.mfa.totp,

  async enroll({ ctx, user, factorId, body }) {
    // The issuer defaults to SITE_URL's host as written there (its case, an explicit port), as the original's
    // URL parser hands it over; the account is the user's email (the original's choice).
    const issuer = typeof body.issuer === 'string' && body.issuer ? body.issuer : siteHost(ctx.config.siteUrl);
    const secret = new Secret({ size: 20 });
    const uri = totpFor(secret, issuer, user.email ?? '').toString();
    // Imported on the first enrolment, not with the route table (docs/architecture.md#threads).
    const { default: QRCode } = await import('qrcode');
    // A QR code holds at most 1,273 bytes at level H and the URI carries the client's issuer (twice,
    // percent-encoded): the library's refusal of a longer one is the client's input, not a 500.
    const svg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'H', margin: 4 }).catch(() => {
      throw apiError('mfa_totp_uri_too_long');
    });
    return {
      columns: { secret: secretBox(ctx.config).sealOrClear(factorId, secret.base32) },
      // The raw SVG, as the original sends it: the client makes it a data: URI (data:image/svg+xml;utf-8,…).
      answer: { totp: { qr_code: forDataUri(svg), secret: secret.base32, uri } },
    };
  },

  challenge() {
    return { columns: {} };
  },

  verify({ ctx, factor, body }) {
    // Spaces around it are dropped, as the original's TOTP library drops them: a pasted code verifies.
    const code = typeof body.code === 'string' ? body.code.trim() : '';
    const box = secretBox(ctx.config);
    const { value, stale } = box.open(factor.id, factor.secret ?? '');
    const now = Date.now();
    const delta = /^\d{6}$/.test(code) ? totpFor(value, '', '').validate({ token: code, timestamp: now, window: WINDOW }) : null;
    if (delta === null) throw apiError('mfa_totp_verification_failed');
    const step = Math.floor(now / 1000 / PERIOD) + delta;
    return {
      async commit(q) {
        if (!(await spendTotpStep(q, factor.id, step))) return false;
        // Sealed by a retired key (or stored in clear by an older setup): sealed again with the current one.
        if (stale) await updateFactor(q, factor.id, { secret: box.seal(factor.id, value) });
        return true;
      },
    };
  },
};

/** Pixels per module, and so the image's size, as the original draws it. */
const PIXELS_PER_MODULE = 3;

/**
 * The library's SVG made fit for the data: URI clients build from it without escaping anything: colours by
 * name, since a `#` there starts the URI's fragment and a browser shows a cut-off, broken image; and a
 * width and height, so an <img> shows it at the original's size (3 pixels a module, a quiet zone of 4
 * modules, which the QR standard asks for).
 */
function forDataUri(svg: string): string {
  const modules = Number(/viewBox="0 0 (\d+) \d+"/.exec(svg)?.[1]);
  const size = modules * PIXELS_PER_MODULE;
  return svg
    .trim()
    .replace('<svg ', `<svg width="${size}" height="${size}" `)
    .replaceAll('fill="#ffffff"', 'fill="white"')
    .replaceAll('stroke="#000000"', 'stroke="black"');
}
