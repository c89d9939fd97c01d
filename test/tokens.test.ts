// Token formats are wire formats of the original service (REFERENCE §4.1, §7.1): these tests pin them.
import t from 'tap';
import { createHash } from 'node:crypto';
import { isPlausibleRefreshToken, newOtp, newRefreshToken, newUuid, otpHash, safeEqual, sha256Hex } from '../dist/server/crypto/tokens.js';

t.test('refresh tokens are 12 chars of lowercase base32 and pass pre-validation', async (t) => {
  const seen = new Set<string>();
  for (let i = 0; i < 200; i++) {
    const token = newRefreshToken();
    t.match(token, /^[a-z2-7]{12}$/);
    t.ok(isPlausibleRefreshToken(token));
    seen.add(token);
  }
  t.equal(seen.size, 200, 'no repeats');
});

t.test('refresh token pre-validation follows the original', async (t) => {
  t.notOk(isPlausibleRefreshToken(''), 'empty');
  t.notOk(isPlausibleRefreshToken('abcdefghijk'), '11 chars');
  t.ok(isPlausibleRefreshToken('abcdefgh0189'), '12 chars of [a-z0-9]');
  t.notOk(isPlausibleRefreshToken('ABCDEFGHIJKL'), 'uppercase');
  t.notOk(isPlausibleRefreshToken('abcdefghijk-'), 'punctuation');
  t.notOk(isPlausibleRefreshToken('abcdefghijklm'), '13 chars that are not a v2 token');
  // The original's tokens before its v2.171: 16 random bytes in base64url (an adopted database's clients hold them).
  t.ok(isPlausibleRefreshToken('Xk3_9aZ-q1w2E3r4t5y6uw'), '22 chars of base64url');
  t.notOk(isPlausibleRefreshToken('Xk3_9aZ-q1w2E3r4t5y6u='), '22 chars, one outside base64url');
  t.notOk(isPlausibleRefreshToken('Xk3_9aZ-q1w2E3r4t5y6uwA'), '23 chars that are not a v2 token');
});

t.test('a structurally valid v2 refresh token passes, a corrupted one does not', async (t) => {
  // Built independently here: 0x00 | session uuid | uvarint(300) | 16 signature bytes | sha256 checksum[0..4]
  const session = Buffer.from('0f0e0d0c0b0a09080706050403020100', 'hex');
  const body = Buffer.concat([Buffer.from([0]), session, Buffer.from([0xac, 0x02]), Buffer.alloc(16, 7)]);
  const checksum = createHash('sha256').update(body).digest().subarray(0, 4);
  const token = Buffer.concat([body, checksum]).toString('base64url');
  t.ok(isPlausibleRefreshToken(token));
  const flipped = Buffer.concat([body, checksum]);
  flipped[20] ^= 1;
  t.notOk(isPlausibleRefreshToken(flipped.toString('base64url')), 'checksum mismatch');
  t.notOk(isPlausibleRefreshToken(Buffer.concat([Buffer.from([1]), body.subarray(1), checksum]).toString('base64url')), 'wrong version');
});

t.test('OTPs are zero-padded digits of the requested length', async (t) => {
  for (const length of [6, 8, 10]) {
    for (let i = 0; i < 50; i++) t.match(newOtp(length), new RegExp(`^\\d{${length}}$`));
  }
  t.throws(() => newOtp(0), TypeError);
});

t.test('otpHash is lowercase hex SHA-224 of identifier + otp (the link token format)', async (t) => {
  const expected = createHash('sha224').update('user@example.com123456').digest('hex');
  t.equal(otpHash('user@example.com', '123456'), expected);
  t.match(otpHash('15551234567', '000000'), /^[0-9a-f]{56}$/);
  // Known answer for SHA-224("abc"), FIPS 180-2 appendix: otpHash is plain SHA-224 of the concatenation.
  t.equal(otpHash('ab', 'c'), '23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7');
});

t.test('sha256Hex', async (t) => {
  t.equal(sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
});

t.test('safeEqual', async (t) => {
  t.ok(safeEqual('same', 'same'));
  t.notOk(safeEqual('same', 'Same'));
  t.notOk(safeEqual('short', 'longer value'));
  t.ok(safeEqual('', ''));
  t.notOk(safeEqual('é', 'e'));
});

t.test('newUuid is a v4 UUID', async (t) => {
  t.match(newUuid(), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
});
