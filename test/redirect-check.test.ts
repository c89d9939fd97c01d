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

// The original's own redirect cases (internal/api/verify_test.go, TestVerifySignupWithRedirectURLContainedPath):
// site, allow list, redirect_to, and what the Location must contain (null: it falls back to SITE_URL).
const ORIGINAL_CASES: Array<[string, string, string[], string, string | null]> = [
  [
    'same site url and redirect url with path',
    'http://localhost:3000/#/',
    ['http://localhost:3000'],
    'http://localhost:3000/#/',
    'http://localhost:3000/#/',
  ],
  [
    'different site url and redirect url in allow list',
    'https://someapp-something.codemagic.app/#/',
    ['http://localhost:3000'],
    'http://localhost:3000',
    'http://localhost:3000',
  ],
  [
    'different site url and redirect url not in allow list',
    'https://someapp-something.codemagic.app/#/',
    ['http://localhost:3000'],
    'http://localhost:3000/docs',
    null,
  ],
  [
    'same wildcard site url and redirect url in allow list',
    'http://sub.test.dev:3000/#/',
    ['http://*.test.dev:3000'],
    'http://sub.test.dev:3000/#/',
    'http://sub.test.dev:3000/#/',
  ],
  [
    'different wildcard site url and redirect url in allow list',
    'http://sub.test.dev/#/',
    ['http://*.other.dev:3000'],
    'http://sub.other.dev:3000',
    'http://sub.other.dev:3000',
  ],
  [
    'different wildcard site url and redirect url not in allow list',
    'http://test.dev:3000/#/',
    ['http://*.allowed.dev:3000'],
    'http://sub.test.dev:3000/#/',
    null,
  ],
  [
    'exact mobile deep link redirect url in allow list',
    'http://test.dev:3000/#/',
    ['twitter://timeline'],
    'twitter://timeline',
    'twitter://timeline',
  ],
  [
    'wildcard mobile deep link redirect url in allow list',
    'http://test.dev:3000/#/',
    ['com.example.app://**'],
    'com.example.app://sign-in/v2',
    'com.example.app://sign-in/v2',
  ],
  ['redirect respects . separator', 'http://localhost:3000', ['http://*.*.dev:3000'], 'http://foo.bar.dev:3000', 'http://foo.bar.dev:3000'],
  ['redirect does not respect . separator', 'http://localhost:3000', ['http://*.dev:3000'], 'http://foo.bar.dev:3000', null],
  [
    'redirect respects / separator in url subdirectory',
    'http://localhost:3000',
    ['http://test.dev:3000/*/*'],
    'http://test.dev:3000/bar/foo',
    'http://test.dev:3000/bar/foo',
  ],
  [
    'redirect does not respect / separator in url subdirectory',
    'http://localhost:3000',
    ['http://test.dev:3000/*'],
    'http://test.dev:3000/bar/foo',
    null,
  ],
  [
    'redirect ignores fragment for validation',
    'http://localhost:3000',
    ['http://*.example.com/*'],
    'http://something#.example.com/abc',
    null,
  ],
  ['redirect ignores unusual hostnames', 'http://localhost:3000', ['http://*.example.com/*'], 'http://japanese。.example.com/abc', null],
  [
    'redirect with allowed deep-link url correctly without a hostname',
    'http://localhost:3000',
    ['com.myapp://**'],
    'com.myapp://',
    'com.myapp:',
  ],
];

t.test('the original’s redirect cases give the original’s answers', async (t) => {
  for (const [desc, siteUrl, uriAllowList, target, expected] of ORIGINAL_CASES) {
    const href = createRedirectCheck({ siteUrl, uriAllowList })(target);
    if (expected === null) t.equal(href, null, desc);
    else t.ok(href?.includes(expected), `${desc}: ${href}`);
  }
});

t.test('an entry ending in ** after its authority accepts any port and path of app deep links', async (t) => {
  const accepts = (entry: string, target: string) => createRedirectCheck({ siteUrl: SITE_URL, uriAllowList: [entry] })(target);
  t.equal(accepts('myapp://**', 'myapp://auth/callback'), 'myapp://auth/callback');
  t.equal(accepts('exp://**', 'exp://127.0.0.1:8081/--/auth/callback'), 'exp://127.0.0.1:8081/--/auth/callback');
  t.equal(accepts('com.example.app://**', 'com.example.app://sign-in/v2?x=1'), 'com.example.app://sign-in/v2?x=1');
  t.equal(accepts('https://*.example.test**', 'https://a.example.test:8443/cb'), 'https://a.example.test:8443/cb');
  t.equal(accepts('http://localhost:**', 'http://localhost:5173/auth/cb'), 'http://localhost:5173/auth/cb');
  // Still judged on the parsed parts: the host, the scheme and the form of the URL.
  t.equal(accepts('https://app.**', 'https://evil.example/app.x'), null, 'the host is the parsed hostname');
  t.equal(accepts('https://*.example.test**', 'https://a.example.test.evil.example/'), null, 'no label past the entry’s');
  // The `**` that opens port and path is no glob inside the last label: another top-level domain is another site.
  t.equal(accepts('https://*.example.com**', 'https://login.example.company/x'), null, 'no label that only starts like the entry’s');
  t.equal(accepts('https://example.com**', 'https://example.computer/x'), null);
  t.equal(accepts('https://example.com**', 'https://example.com:8443/x'), 'https://example.com:8443/x');
  t.equal(
    accepts('https://app.**', 'https://app.example.test/x'),
    'https://app.example.test/x',
    'a `**` label of its own still spans labels',
  );
  t.equal(accepts('https://**', 'https://any.example.test:8443/x'), 'https://any.example.test:8443/x');
  // A scheme glob names every scheme, but never one that runs script where the redirect's page links to it.
  t.equal(accepts('*://app.example.test/**', 'myapp://app.example.test/cb'), 'myapp://app.example.test/cb');
  for (const target of [
    'javascript://app.example.test/%0aalert(1)',
    'JavaScript://app.example.test/%0aalert(1)',
    'data://app.example.test/x',
    'vbscript://app.example.test/x',
    'file://app.example.test/etc/passwd',
  ]) {
    t.equal(accepts('*://app.example.test/**', target), null, target);
  }
  t.equal(accepts('myapp://**', 'https://evil.example/'), null, 'the scheme is matched');
  t.equal(accepts('myapp://**', 'myapp.evil://x'), null);
  t.equal(accepts('myapp://**', 'myapp:/x'), null, 'an entry written scheme:// names only URLs with an authority');
  t.equal(accepts('myapp://**', 'myapp://u:p@host/x'), null, 'userinfo stays refused');
  t.equal(accepts('http://localhost:3000', 'http://localhost:3000/x'), null, 'without ** nor a path: the root only');
  t.equal(accepts('https://app.example.test', 'https://other.example.test/'), null, 'without **: no other host');
});

t.test(
  'a host written as an IP address that is not loopback is refused for every scheme, allow list or not, as the original',
  async (t) => {
    const accepts = (entry: string, target: string) => createRedirectCheck({ siteUrl: SITE_URL, uriAllowList: [entry] })(target);
    t.equal(accepts('exp://**', 'exp://192.168.1.5:8081/--/auth/callback'), null, 'an app scheme on a LAN address');
    t.equal(accepts('http://10.0.0.5:3000/**', 'http://10.0.0.5:3000/cb'), null, 'even when the entry names it');
    t.equal(accepts('myapp://**', 'myapp://[2001:db8::1]/cb'), null, 'IPv6 alike');
    t.equal(accepts('myapp://**', 'myapp://12345/cb'), null, 'an integer host is an address in disguise');
    t.equal(
      accepts('myapp://**', 'myapp://[::ffff:127.0.0.1]/cb'),
      'myapp://[::ffff:7f00:1]/cb',
      'a loopback address goes by the allow list',
    );
    t.equal(accepts('http://127.0.0.1:*/**', 'http://127.0.0.1:53682/cb'), 'http://127.0.0.1:53682/cb', 'an entry naming an address');
    t.equal(accepts('http://127.0.0.*:3000/**', 'http://127.0.0.1:3000/cb'), 'http://127.0.0.1:3000/cb', 'a glob over its numbers');
    t.equal(accepts('https://app.example.test/**', 'http://127.0.0.1:53682/cb'), null, 'not listed: refused');
    // The site itself may be an address: it is matched first, as in the original.
    const lan = createRedirectCheck({ siteUrl: 'http://10.0.0.5:3000', uriAllowList: [] });
    t.equal(lan('http://10.0.0.5:3000/cb?x=1'), 'http://10.0.0.5:3000/cb?x=1');
  },
);
