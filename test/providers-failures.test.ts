// Every plain provider module against a provider that misbehaves on every path: an error status, an HTML
// page, a redirect, an error inside a 200, no answer at all, a body that never ends, nobody listening.
// Each call must end in a ProviderError (which the flow turns into the callback's error redirect), never
// hang past INTERNAL_HTTP_TIMEOUT and never crash with another kind of error.
import t from 'tap';
import { ProviderError } from '../dist/server/providers/outbound.js';
import { PLAIN_PROVIDERS } from '../dist/server/providers/plain.js';
import type { OAuth2Provider } from '../dist/server/providers/types.js';
import { providerConfig, startProviderFake, testRuntime, type FakeAnswer } from './helpers/provider-fakes.js';
import { unusedPort } from './helpers/template-server.js';

// Short, so the cases where nothing arrives end quickly; the fake never answers them at all, so the
// outcome does not depend on timing.
const TIMEOUT_SECONDS = 0.3;

const oauth2 = Object.values(PLAIN_PROVIDERS).filter((p): p is OAuth2Provider => p.protocol === 'oauth2');
const tokens = { accessToken: 'access', refreshToken: '', idToken: '', response: { access_token: 'access' } };

const misbehaviours: Record<string, FakeAnswer> = {
  'a 401 with an OAuth error body': { status: 401, json: { error: 'invalid_client', error_description: 'Client authentication failed' } },
  'a 500': { status: 500, text: 'Internal Server Error', contentType: 'text/plain' },
  'an HTML page with status 200': { text: '<!doctype html><html><body>Please sign in</body></html>' },
  'a redirect (never followed)': { status: 302, headers: { location: 'https://elsewhere.example/steal' }, text: '' },
  'an error inside a 200 JSON answer': { json: { ok: false, error: 'invalid_code' } },
  'a JSON list where an object belongs': { json: [] },
  'no answer at all': { stall: 'headers' },
  'headers, then a body that never completes': { stall: 'body', json: { access_token: 'partial' } },
};

t.test('the plain OAuth2 modules, the OAuth 1.0a module and the shared list agree on names', async (t) => {
  t.equal(oauth2.length, 17);
  for (const [key, provider] of Object.entries(PLAIN_PROVIDERS)) t.equal(provider.name, key, `${key} is named ${provider.name}`);
});

for (const [kind, answer] of Object.entries(misbehaviours)) {
  t.test(`a provider answering ${kind}: ProviderError from every call`, async (t) => {
    const fake = await startProviderFake({ '*': () => answer });
    t.teardown(fake.close);
    const rt = testRuntime(providerConfig({ url: fake.url }), TIMEOUT_SECONDS);
    await Promise.all(
      oauth2.map(async (provider) => {
        await t.rejects(provider.exchangeCode(rt, 'code', 'verifier'), ProviderError, `${provider.name} exchangeCode`);
        // workos reads its profile from the token answer and has no user API to misbehave
        if (provider.name !== 'workos')
          await t.rejects(provider.fetchProfile(rt, tokens, new URLSearchParams()), ProviderError, `${provider.name} fetchProfile`);
      }),
    );
    const { twitter } = PLAIN_PROVIDERS;
    await t.rejects(twitter.requestToken(rt, 'https://auth.example.test/callback'), ProviderError, 'twitter requestToken');
    await t.rejects(twitter.accessToken(rt, 'token', 'secret', 'verifier'), ProviderError, 'twitter accessToken');
    await t.rejects(twitter.fetchProfile(rt, { ...tokens, tokenSecret: 'secret' }), ProviderError, 'twitter fetchProfile');
  });
}

t.test('a provider whose user API answers an object without the user id: refused, not an identity without a subject', async (t) => {
  const fake = await startProviderFake({ '*': () => ({ json: { data: [{}], values: [] } }) });
  t.teardown(fake.close);
  const rt = testRuntime(providerConfig({ url: fake.url }));
  for (const provider of oauth2) {
    await t.rejects(provider.fetchProfile(rt, tokens, new URLSearchParams()), ProviderError, provider.name);
  }
  await t.rejects(PLAIN_PROVIDERS.twitter.fetchProfile(rt, { ...tokens, tokenSecret: 's' }), ProviderError, 'twitter');
});

t.test('a provider answering 64 MiB: ProviderError once 1 MiB arrived, the rest never read', async (t) => {
  // Valid JSON all the way (a string that goes on), so only the cap can stop it before the end.
  const fake = await startProviderFake({
    '*': () => ({ text: 'x'.repeat(64 * 1024), contentType: 'application/json', huge: 64 * 1024 * 1024 }),
  });
  t.teardown(fake.close);
  const rt = testRuntime(providerConfig({ url: fake.url }), 30);
  const tooLarge = { name: 'ProviderError', message: /answered more than 1048576 bytes/ };
  for (const provider of oauth2) {
    await t.rejects(provider.exchangeCode(rt, 'code', 'verifier'), tooLarge, `${provider.name} exchangeCode`);
    if (provider.name !== 'workos')
      await t.rejects(provider.fetchProfile(rt, tokens, new URLSearchParams()), tooLarge, `${provider.name} fetchProfile`);
  }
  await t.rejects(PLAIN_PROVIDERS.twitter.accessToken(rt, 'token', 'secret', 'verifier'), tooLarge, 'twitter accessToken');
});

t.test('nobody listening at the configured URL: ProviderError', async (t) => {
  const rt = testRuntime(providerConfig({ url: `http://127.0.0.1:${await unusedPort()}` }), TIMEOUT_SECONDS);
  for (const provider of oauth2) {
    await t.rejects(provider.exchangeCode(rt, 'code', 'verifier'), ProviderError, provider.name);
  }
  await t.rejects(PLAIN_PROVIDERS.twitter.requestToken(rt, 'https://auth.example.test/callback'), ProviderError, 'twitter');
});
