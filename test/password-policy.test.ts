// Strength messages and reasons are the original's wire text (REFERENCE §6).
import t from 'tap';
import { splitCharacterSets } from '../dist/server/config/convert.js';
import { PASSWORD_MAX_LENGTH, checkPasswordStrength, isPasswordTooLong } from '../dist/server/users/password-policy.js';

const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const DIGITS = '0123456789';

t.test('a password meeting every rule is accepted', async (t) => {
  t.equal(checkPasswordStrength('Secret1', { minLength: 6, requiredCharacters: [LOWER, UPPER, DIGITS] }), null);
  t.equal(checkPasswordStrength('secret', { minLength: 6, requiredCharacters: [] }), null);
});

t.test('too short', async (t) => {
  t.same(checkPasswordStrength('abc', { minLength: 8, requiredCharacters: [] }), {
    message: 'Password should be at least 8 characters.',
    reasons: ['length'],
  });
});

t.test('length counts UTF-8 bytes, as the original does', async (t) => {
  t.equal(checkPasswordStrength('ééé', { minLength: 6, requiredCharacters: [] }), null);
  t.ok(isPasswordTooLong('é'.repeat(37)), '74 bytes');
  t.notOk(isPasswordTooLong('a'.repeat(PASSWORD_MAX_LENGTH)));
  t.ok(isPasswordTooLong('a'.repeat(PASSWORD_MAX_LENGTH + 1)));
});

t.test('missing character sets give one message naming every set', async (t) => {
  t.same(checkPasswordStrength('abcdefgh', { minLength: 6, requiredCharacters: [LOWER, UPPER, DIGITS] }), {
    message: `Password should contain at least one character of each: ${LOWER}, ${UPPER}, ${DIGITS}.`,
    reasons: ['characters'],
  });
});

t.test('both rules: messages joined by one space, reasons in order', async (t) => {
  t.same(checkPasswordStrength('abc', { minLength: 6, requiredCharacters: [LOWER, DIGITS] }), {
    message: `Password should be at least 6 characters. Password should contain at least one character of each: ${LOWER}, ${DIGITS}.`,
    reasons: ['length', 'characters'],
  });
});

t.test('sets from the config loader: an escaped colon is a character of the set', async (t) => {
  const sets = splitCharacterSets('abc:\\:;:123');
  t.same(sets, ['abc', ':;', '123']);
  t.equal(checkPasswordStrength('a:1zzzz', { minLength: 6, requiredCharacters: sets }), null);
  t.same(checkPasswordStrength('a;zzzzz', { minLength: 6, requiredCharacters: sets }), {
    message: 'Password should contain at least one character of each: abc, :;, 123.',
    reasons: ['characters'],
  });
});

t.test('a leaked password (HIBP) comes last, after every local rule', async (t) => {
  const pwned = 'Password is known to be weak and easy to guess, please choose a different one.';
  t.same(checkPasswordStrength('Secret1', { minLength: 6, requiredCharacters: [] }, true), { message: pwned, reasons: ['pwned'] });
  t.same(checkPasswordStrength('abc', { minLength: 6, requiredCharacters: [DIGITS] }, true), {
    message: `Password should be at least 6 characters. Password should contain at least one character of each: ${DIGITS}. ${pwned}`,
    reasons: ['length', 'characters', 'pwned'],
  });
});
