// A local stand-in for GitHub's OAuth app endpoints and REST API, speaking their wire format:
// GET /login/oauth/authorize (the user approves at once: 302 to redirect_uri with code and state),
// POST /login/oauth/access_token (form body; JSON answer with Accept: application/json, and GitHub's
// 200 {"error":"bad_verification_code"} for an unknown code), GET /user and GET /user/emails with the token.
import http from 'node:http';
import type net from 'node:net';
import { randomBytes } from 'node:crypto';

export interface GithubUser {
  id: number;
  login: string;
  name: string | null;
  avatar_url: string;
  emails: Array<{ email: string; primary: boolean; verified: boolean; visibility: 'public' | 'private' | null }>;
}

/** A GitHub account with one primary address, for tests that need a person and nothing special about them. */
export function githubPerson(id: number, email: string, verified = true): GithubUser {
  return {
    id,
    login: `user${id}`,
    name: `User ${id}`,
    avatar_url: `https://avatars.example.test/${id}`,
    emails: [{ email, primary: true, verified, visibility: 'public' }],
  };
}

export interface GithubFake {
  base: string;
  clientId: string;
  clientSecret: string;
  users: Map<number, GithubUser>;
  /** which user the next authorization approves */
  approveAs: number;
  /** every token request's form, for assertions */
  tokenRequests: URLSearchParams[];
  /** the token endpoint never answers (an outage): the service's outbound timeout must end the wait */
  hangTokenEndpoint: boolean;
  /** Plays the browser: opens the authorize URL and returns the parameters GitHub sends back. */
  approve(authorizeUrl: string): Promise<URLSearchParams>;
  stop(): Promise<void>;
}

export async function startGithubFake(): Promise<GithubFake> {
  const codes = new Map<string, number>();
  const tokens = new Map<string, number>();
  const fake: Omit<GithubFake, 'base' | 'approve' | 'stop'> = {
    clientId: 'Iv1.0123456789abcdef',
    clientSecret: 'github-secret-0123456789',
    users: new Map(),
    approveAs: 0,
    tokenRequests: [],
    hangTokenEndpoint: false,
  };
  const json = (res: http.ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));

  const server = http.createServer((req, res) => void serve(req, res));
  async function serve(req: http.IncomingMessage, res: http.ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://github.test');
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const auth = /^(?:token|bearer) (.+)$/i.exec(req.headers.authorization ?? '')?.[1] ?? '';
    const userOfToken = fake.users.get(tokens.get(auth) ?? -1);

    if (req.method === 'GET' && url.pathname === '/login/oauth/authorize') {
      if (url.searchParams.get('client_id') !== fake.clientId) return res.writeHead(404).end('Not Found');
      const code = randomBytes(10).toString('hex');
      codes.set(code, fake.approveAs);
      const back = new URL(url.searchParams.get('redirect_uri')!);
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      return res.writeHead(302, { location: back.href }).end();
    }
    if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      const form = new URLSearchParams(Buffer.concat(chunks).toString());
      fake.tokenRequests.push(form);
      if (fake.hangTokenEndpoint) return; // no answer; the connection closes when the server stops
      const userId = codes.get(form.get('code') ?? '');
      if (form.get('client_id') !== fake.clientId || form.get('client_secret') !== fake.clientSecret) {
        return json(res, 200, {
          error: 'incorrect_client_credentials',
          error_description: 'The client_id and/or client_secret passed are incorrect.',
        });
      }
      if (userId === undefined) {
        return json(res, 200, { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' });
      }
      codes.delete(form.get('code')!);
      const token = `gho_${randomBytes(18).toString('hex')}`;
      tokens.set(token, userId);
      return json(res, 200, { access_token: token, token_type: 'bearer', scope: 'user:email' });
    }
    if (req.method === 'GET' && (url.pathname === '/user' || url.pathname === '/user/emails')) {
      if (!userOfToken) return json(res, 401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' });
      if (url.pathname === '/user/emails') return json(res, 200, userOfToken.emails);
      const { emails, ...user } = userOfToken;
      const publicEmail = emails.find((e) => e.visibility === 'public')?.email ?? null;
      return json(res, 200, { ...user, node_id: `U_${user.id}`, type: 'User', site_admin: false, email: publicEmail });
    }
    res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'Not Found' }));
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  return Object.assign(fake, {
    base,
    async approve(authorizeUrl: string) {
      const res = await fetch(authorizeUrl, { redirect: 'manual' });
      const location = res.headers.get('location');
      if (res.status !== 302 || !location) throw new Error(`GitHub fake answered ${res.status}`);
      return new URL(location).searchParams;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
