// MFA_CHALLENGE_EXPIRY_DURATION is a float64 of seconds in the original, read with ParseFloat: a fraction, a
// sign and an exponent are all numbers there, anything under 300 (negative too) becomes 300, and a number past
// a float64's range stops its start. MFA_FACTOR_EXPIRY_DURATION is a Go duration raised to 300 s the same way.
// Both were refused here when negative, and an out-of-range number was read as an infinite lifetime.
import t from 'tap';
import { loadConfig } from '../dist/server/config/load.js';
import { PRODUCTION_ENV } from './helpers/settings.js';

const load = (env: Record<string, string>) => loadConfig({ env: { ...PRODUCTION_ENV, ...env }, envFile: null });
const raised = (name: string, given: string) => `${name}: ${given} s is under 300 s; using 300 s, as the original does`;

t.test('a fraction of a second is a number of seconds under 300, raised to 300 with a warning', async (t) => {
  for (const given of ['1.5', '0.5', '.5', '299.9']) {
    const c = load({ GOTRUE_MFA_CHALLENGE_EXPIRY_DURATION: given });
    t.equal(c.mfa.challengeExpirySeconds, 300, given);
    t.ok(c.warnings.includes(raised('GOTRUE_MFA_CHALLENGE_EXPIRY_DURATION', String(Number(given)))), `${given}: warned`);
  }
  // Over 300 a fraction is kept as whole seconds, the part the original's challenge expiry counts.
  t.equal(load({ GOTRUE_MFA_CHALLENGE_EXPIRY_DURATION: '450.75' }).mfa.challengeExpirySeconds, 450);
});

t.test('a signed number is read as ParseFloat reads it: a negative one becomes 300 s, not a refusal to start', async (t) => {
  for (const given of ['-5', '-1.5', '-0.5e1']) {
    const c = load({ GOTRUE_MFA_CHALLENGE_EXPIRY_DURATION: given });
    t.equal(c.mfa.challengeExpirySeconds, 300, given);
    t.ok(c.warnings.includes(raised('GOTRUE_MFA_CHALLENGE_EXPIRY_DURATION', String(Number(given)))), `${given}: warned`);
  }
  t.equal(load({ GOTRUE_MFA_CHALLENGE_EXPIRY_DURATION: '+400' }).mfa.challengeExpirySeconds, 400);
  t.equal(load({ GOTRUE_MFA_CHALLENGE_EXPIRY_DURATION: '6e2' }).mfa.challengeExpirySeconds, 600);
});

t.test('a negative factor lifetime is raised to 300 s as well, as the original raises any shorter one', async (t) => {
  const c = load({ GOTRUE_MFA_FACTOR_EXPIRY_DURATION: '-5s' });
  t.equal(c.mfa.factorExpirySeconds, 300);
  t.ok(c.warnings.includes(raised('GOTRUE_MFA_FACTOR_EXPIRY_DURATION', '-5')));
});

t.test('a number past the range of a float64 stops the start, as ParseFloat refuses it, not an endless lifetime', async (t) => {
  t.throws(
    () => load({ GOTRUE_MFA_CHALLENGE_EXPIRY_DURATION: '1e400' }),
    /GOTRUE_MFA_CHALLENGE_EXPIRY_DURATION: "1e400" is not a duration/,
  );
  t.throws(
    () => load({ GOTRUE_MFA_CHALLENGE_EXPIRY_DURATION: '-1e400' }),
    /GOTRUE_MFA_CHALLENGE_EXPIRY_DURATION: "-1e400" is not a duration/,
  );
});
