// The redirect_to check itself over the whole bypass corpus (test/fixtures/redirect-bypass.json): no payload
// may lead a browser off the site or the allow-listed hosts, and the legitimate targets come through
// normalised. The endpoints that carry redirect_to are driven with the same corpus in redirect-endpoints.test.ts.
import t from 'tap';
import { createRedirectCheck } from '../dist/server/http/redirect-target.js';
import { compileAllowPattern } from '../dist/server/http/redirect-patterns.js';
import { corpus, landsSafely, SITE_URL, URI_ALLOW_LIST } from './helpers/redirects.js';

const check = createRedirectCheck({ siteUrl: SITE_URL, uriAllowList: [URI_ALLOW_LIST] });

t.test(`none of the ${corpus.refused.length} bypass payloads yields an unsafe target`, async (t) => {
  const unsafe = corpus.refused.filter((payload) => {
    const href = check(payload);
    return href !== null && !landsSafely(href);
  });
  t.strictSame(unsafe, []);
});

t.test('the reported payloads are refused outright', async (t) => {
  for (const payload of [
    'https://evil.example?.allowed.example.test/',
    'https://evil.example\\x.allowed.example.test/',
    'https://evil.example\\.allowed.example.test/',
    'https://evil.example\\@x.allowed.example.test/',
    'https://evil.example?@x.allowed.example.test/',
    'https://evil.example?x=.allowed.example.test/',
    'https://evil.example%5c@x.allowed.example.test/',
  ]) {
    t.equal(check(payload), null, payload);
  }
});

t.test('userinfo, backslashes, whitespace and control characters are refused even on allowed hosts', async (t) => {
  for (const payload of [
    'https://u:p@a.allowed.example.test/',
    'https://u@app.example.test/',
    'https://a.allowed.example.test/\\x',
    'https://a.allowed.example.test/ x',
    'https://a.allowed.example.test/\tx',
    'https://a.allowed.example.test/\u0000',
    ' https://app.example.test/',
  ]) {
    t.equal(check(payload), null, JSON.stringify(payload));
  }
});

t.test('legitimate targets are handed on as their normalised href', async (t) => {
  for (const [input, href] of corpus.accepted) t.equal(check(input), href, input);
});

t.test('allow-list globs: * stays within a host label or path segment, ** spans them', async (t) => {
  const url = (s: string) => new URL(s);
  const sub = compileAllowPattern('https://*.example.test/app/*');
  t.ok(sub(url('https://a.example.test/app/cb')));
  t.notOk(sub(url('https://a.b.example.test/app/cb')), '* is one label');
  t.notOk(sub(url('https://example.test/app/cb')), '* is not empty');
  t.notOk(sub(url('https://a.example.test/app/cb/more')), '* is one segment');
  t.notOk(sub(url('http://a.example.test/app/cb')), 'the scheme is matched');
  t.notOk(sub(url('https://a.example.test:8443/app/cb')), 'no port in the entry: the default port only');
  const deep = compileAllowPattern('https://**.example.test/**');
  t.ok(deep(url('https://a.b.example.test/x/y/z')));
  t.ok(compileAllowPattern('http://localhost:*/**')(url('http://localhost:5173/cb')), 'a port glob');
  t.ok(compileAllowPattern('https://app.example.test:443/cb')(url('https://app.example.test/cb')), 'an explicit default port');
  t.ok(compileAllowPattern('https://app.example.test')(url('https://app.example.test/')), 'no path: the root');
  t.notOk(compileAllowPattern('https://app.example.test')(url('https://app.example.test/x')));
  t.ok(compileAllowPattern('myapp://callback')(url('myapp://callback')), 'an app scheme');
  t.ok(compileAllowPattern('https://*.münchen.example/**')(url('https://a.münchen.example/')), 'internationalised labels');
  t.notOk(compileAllowPattern('not a url')(url('https://app.example.test/')), 'an entry that is not a URL matches nothing');
});

t.test('same-site targets keep any path; loopback sites accept any port', async (t) => {
  const local = createRedirectCheck({ siteUrl: 'http://localhost:3000', uriAllowList: [] });
  t.equal(local('http://localhost:5173/cb?x=1'), 'http://localhost:5173/cb?x=1');
  t.equal(local('http://localhost.evil.example/'), null);
  t.equal(local('https://localhost:3000/'), null, 'another scheme');
  t.equal(check('https://app.example.test:8443/'), null, 'another port on a non-loopback site');
});
