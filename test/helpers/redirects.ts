// The redirect bypass corpus (test/fixtures/redirect-bypass.json) and the one question asked of every
// target it produces: where would a browser go?
import { readFileSync } from 'node:fs';

export const SITE_URL = 'https://app.example.test';
export const URI_ALLOW_LIST = 'https://*.allowed.example.test/**';
/** A mail stack for redirect tests: the site and allow list above, mail sends never held back. */
export const REDIRECT_MAIL_ENV = {
  AUTH_SITE_URL: SITE_URL,
  AUTH_URI_ALLOW_LIST: URI_ALLOW_LIST,
  AUTH_SMTP_MAX_FREQUENCY: '1ms', // 0 would be 60 s, as in the original
  AUTH_RATE_LIMIT_EMAIL_SENT: '1000000',
};

export const corpus = JSON.parse(readFileSync(new URL('../fixtures/redirect-bypass.json', import.meta.url), 'utf8')) as {
  refused: string[];
  accepted: Array<[string, string]>;
};

/** https, no userinfo, default port, and the site's host or one label under the allowed domain. */
export function landsSafely(href: string): boolean {
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    return false;
  }
  return (
    url.protocol === 'https:' &&
    !url.username &&
    !url.password &&
    url.port === '' &&
    (url.hostname === 'app.example.test' || /^[a-z0-9-]+\.allowed\.example\.test$/.test(url.hostname))
  );
}

/** A Location without its fragment: what the redirect target was before the session was added. */
export const withoutFragment = (href: string) => href.split('#')[0];
