// Which outbound calls take the egress proxy (docs/settings.md#outbound-proxy): the original's HTTP client's
// rules, so that an operator's HTTPS_PROXY / HTTP_PROXY / NO_PROXY route the same calls after the swap, and
// how the settings are read (both spellings, the upper-case one first) and checked at start.
import t from 'tap';
import { proxyRule, proxyAddress } from '../dist/server/outbound-proxy/rules.js';
import { loadConfig, ConfigError } from '../dist/server/config/load.js';

const rule = (noProxy: string, httpsProxy = 'http://egress.internal:3128', httpProxy = 'http://plain-egress.internal:8080') =>
  proxyRule({ httpsProxy, httpProxy, noProxy })!;
const via = (noProxy: string, url: string) => rule(noProxy)(new URL(url))?.href ?? 'direct';

t.test('each scheme takes its own variable; none set, nothing is proxied', async (t) => {
  t.equal(via('', 'https://api.example.com/x'), 'http://egress.internal:3128/');
  t.equal(via('', 'http://api.example.com/x'), 'http://plain-egress.internal:8080/');
  const httpsOnly = proxyRule({ httpsProxy: 'http://egress.internal:3128', httpProxy: '', noProxy: '' })!;
  t.equal(httpsOnly(new URL('http://api.example.com/x')), null, 'an http call with no HTTP_PROXY goes direct');
  t.equal(proxyRule({ httpsProxy: '', httpProxy: '', noProxy: 'example.com' }), null);
});

t.test('localhost and every loopback address go direct, whatever NO_PROXY says', async (t) => {
  for (const url of [
    'http://localhost:9999/',
    'https://127.0.0.1/',
    'http://127.8.9.10:81/',
    'https://[::1]:8443/',
    'http://[::ffff:127.0.0.1]/',
  ])
    t.equal(via('', url), 'direct', url);
  t.equal(via('', 'http://localhost.example.com/'), 'http://plain-egress.internal:8080/', 'only the name localhost itself');
  t.equal(via('', 'http://10.0.0.1/'), 'http://plain-egress.internal:8080/', 'a private address is no exception of itself');
});

t.test('NO_PROXY names: a name and its subdomains, or subdomains only', async (t) => {
  t.equal(via('example.com', 'https://example.com/'), 'direct');
  t.equal(via('example.com', 'https://api.example.com/'), 'direct');
  t.equal(via('example.com', 'https://notexample.com/'), 'http://egress.internal:3128/', 'a suffix is not a subdomain');
  t.equal(via('.example.com', 'https://example.com/'), 'http://egress.internal:3128/');
  t.equal(via('.example.com', 'https://a.b.example.com/'), 'direct');
  t.equal(via('*.example.com', 'https://example.com/'), 'http://egress.internal:3128/');
  t.equal(via('*.example.com', 'https://api.example.com/'), 'direct');
  t.equal(via(' Other.test , EXAMPLE.com ', 'https://api.example.com/'), 'direct', 'blanks around entries, any case');
  t.equal(via('bücher.example', 'https://xn--bcher-kva.example/'), 'direct', 'an international name in either form');
});

t.test('NO_PROXY ports: an entry with a port matches that port only, the scheme giving the default', async (t) => {
  t.equal(via('example.com:443', 'https://example.com/'), 'direct');
  t.equal(via('example.com:443', 'https://example.com:8443/'), 'http://egress.internal:3128/');
  t.equal(via('example.com:8080', 'http://example.com:8080/'), 'direct');
  t.equal(via('10.1.2.3:80', 'http://10.1.2.3/'), 'direct');
  t.equal(via('10.1.2.3:81', 'http://10.1.2.3/'), 'http://plain-egress.internal:8080/');
  t.equal(via('[2001:db8::1]:443', 'https://[2001:db8::1]/'), 'direct');
});

t.test('NO_PROXY addresses and CIDR blocks, IPv4 and IPv6', async (t) => {
  t.equal(via('10.1.2.3', 'https://10.1.2.3/'), 'direct');
  t.equal(via('10.1.2.3', 'https://10.1.2.4/'), 'http://egress.internal:3128/');
  t.equal(via('10.0.0.0/8', 'https://10.200.3.4:8443/'), 'direct', 'a block matches any port');
  t.equal(via('10.0.0.0/8', 'https://11.0.0.1/'), 'http://egress.internal:3128/');
  t.equal(via('2001:db8::/32', 'https://[2001:db8:1::5]/'), 'direct');
  t.equal(via('2001:db8::1', 'https://[2001:db8::1]/'), 'direct');
  t.equal(via('10.0.0.0/8', 'https://ten.example.com/'), 'http://egress.internal:3128/', 'a block never matches a name');
  t.equal(via('10.0.0.0/99', 'https://10.0.0.1/'), 'http://egress.internal:3128/', 'a block that is none is skipped');
});

t.test('NO_PROXY=* sends everything direct', async (t) => {
  t.equal(via('*', 'https://api.example.com/'), 'direct');
  t.equal(via('example.org, *', 'http://10.0.0.1/'), 'direct');
});

t.test('proxy addresses as the original reads them', async (t) => {
  t.equal((proxyAddress('egress.internal:3128') as URL).href, 'http://egress.internal:3128/', 'no scheme: http');
  t.equal((proxyAddress('https://egress.internal') as URL).href, 'https://egress.internal/');
  t.equal((proxyAddress('http://user:p%40ss@egress.internal:3128') as URL).password, 'p%40ss');
  t.match(proxyAddress('socks5://egress.internal:1080'), /only http:\/\/ and https:\/\/ proxies are supported \(not socks5:\/\/\)/);
  t.match(proxyAddress('http://exa mple:80'), /is not a proxy address/);
});

t.test('a proxy address that is refused is quoted without its password', async (t) => {
  t.equal(proxyAddress('http://egress:s3cret@exa mple:80'), '"http://…@exa mple:80" is not a proxy address');
  t.equal(proxyAddress('egress:s3cret@exa mple:80'), '"…@exa mple:80" is not a proxy address', 'no scheme');
  t.equal(proxyAddress('http://a@b:s3cret@exa mple'), '"http://…@exa mple" is not a proxy address', 'an @ in the password');
  t.match(proxyAddress('socks5://egress:s3cret@egress.internal:1080'), /^"socks5:\/\/…@egress\.internal:1080": only http:\/\//);
});

const production = {
  DATABASE_URL: 'postgres://u@db.internal/auth',
  AUTH_DB_DRIVER: 'postgres',
  AUTH_JWT_SECRET: 'a-secret-of-at-least-thirty-two-characters',
  AUTH_SITE_URL: 'https://app.example.com',
  AUTH_API_EXTERNAL_URL: 'https://auth.example.com',
};

t.test('the settings: both spellings, upper case first, AUTH_ too; an unusable proxy stops the start', async (t) => {
  const load = (env: Record<string, string>) => loadConfig({ env: { ...production, ...env }, envFile: null });
  t.same(load({ https_proxy: 'http://lower:1', no_proxy: '.internal' }).outbound, {
    httpsProxy: 'http://lower:1',
    httpProxy: '',
    noProxy: '.internal',
  });
  t.equal(load({ HTTPS_PROXY: 'http://upper:1', https_proxy: 'http://lower:1' }).outbound.httpsProxy, 'http://upper:1');
  t.equal(load({ AUTH_HTTP_PROXY: 'http://ours:1', HTTP_PROXY: 'http://upper:1' }).outbound.httpProxy, 'http://ours:1');
  try {
    load({ HTTPS_PROXY: 'socks5://egress.internal:1080' });
    t.fail('a SOCKS proxy started');
  } catch (err) {
    t.ok(err instanceof ConfigError);
    t.match((err as ConfigError).problems, [/^HTTPS_PROXY: "socks5:\/\/egress.internal:1080": only http:\/\/ and https:\/\/ proxies/]);
  }
});
