// The providers whose modules speak plain OAuth 2.0 (or Twitter's OAuth 1.0a) with a user API, by name,
// for the registry to merge with the OIDC family.
import { bitbucket } from './bitbucket.js';
import { discord } from './discord.js';
import { facebook } from './facebook.js';
import { figma } from './figma.js';
import { fly } from './fly.js';
import { gitlab } from './gitlab.js';
import { kakao } from './kakao.js';
import { linkedin } from './linkedin.js';
import { notion } from './notion.js';
import { slack } from './slack.js';
import { slackOidc } from './slack_oidc.js';
import { snapchat } from './snapchat.js';
import { spotify } from './spotify.js';
import { twitch } from './twitch.js';
import { twitter } from './twitter.js';
import type { ExternalProvider } from './types.js';
import { workos } from './workos.js';
import { x } from './x.js';
import { zoom } from './zoom.js';

export const PLAIN_PROVIDERS = {
  bitbucket,
  discord,
  facebook,
  figma,
  fly,
  gitlab,
  kakao,
  linkedin,
  notion,
  slack,
  slack_oidc: slackOidc,
  snapchat,
  spotify,
  twitch,
  twitter,
  workos,
  x,
  zoom,
} as const satisfies Record<string, ExternalProvider>;
