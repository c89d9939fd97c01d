// The derived child of a refresh token (src/server/sessions/child-token.ts): the original's wire format,
// recomputable from the parent alone, and unpredictable without the server's secret.
import t from 'tap';
import { childRefreshToken } from '../dist/server/sessions/child-token.js';
import { isPlausibleRefreshToken, newRefreshToken } from '../dist/server/crypto/tokens.js';

const SECRET = 'a-secret-that-is-long-enough-0123456789';

t.test('a child has the shape of a fresh token and passes pre-validation', async (t) => {
  for (let i = 0; i < 200; i++) {
    const child = childRefreshToken(SECRET, newRefreshToken());
    t.match(child, /^[a-z2-7]{12}$/);
    t.ok(isPlausibleRefreshToken(child));
  }
});

t.test('the same parent always derives the same child; different parents, different children', async (t) => {
  const parent = newRefreshToken();
  t.equal(childRefreshToken(SECRET, parent), childRefreshToken(SECRET, parent));
  const children = new Set(Array.from({ length: 1000 }, () => childRefreshToken(SECRET, newRefreshToken())));
  t.equal(children.size, 1000);
});

t.test('another secret derives another child', async (t) => {
  const parent = newRefreshToken();
  t.not(childRefreshToken(SECRET, parent), childRefreshToken(`${SECRET}!`, parent));
});

t.test('the 60 bits are spread over the whole alphabet', async (t) => {
  const seen = new Set<string>();
  for (let i = 0; i < 200; i++) for (const c of childRefreshToken(SECRET, newRefreshToken())) seen.add(c);
  t.equal(seen.size, 32);
});

t.test("a parent's later children (a rotated token swapped again) differ from its first and from each other", async (t) => {
  const parent = newRefreshToken();
  t.equal(childRefreshToken(SECRET, parent, 0), childRefreshToken(SECRET, parent), 'the first child as it always was');
  const generations = new Set([0, 1, 2, 3].map((n) => childRefreshToken(SECRET, parent, n)));
  t.equal(generations.size, 4);
  for (const child of generations) t.match(child, /^[a-z2-7]{12}$/);
  t.equal(childRefreshToken(SECRET, parent, 2), childRefreshToken(SECRET, parent, 2), 'each one recomputable');
});
