// GET /user/identities/authorize with an invite_token beside it (docs/oauth.md#manual-linking): the signed-in
// user's link is decided first, as the original decides it, so the identity joins the caller's account and
// the session stays theirs; the invite is left pending for its invitee. GitHub is a local server speaking
// its wire format.
import t from 'tap';
import { githubPerson } from './helpers/github.js';
import { callback, fragmentOf, startGithubLinking } from './helpers/oauth.js';
import { adminToken } from './helpers/admin.js';
import { confirmedUser } from './helpers/users.js';

const { gh, api, stop } = await startGithubLinking();
t.teardown(stop);

t.test('a link with an invite_token links to the signed-in user; the invite stays pending', async (t) => {
  const caller = await confirmedUser(api);
  const invite = await api.request('POST', '/admin/generate_link', {
    token: await adminToken(),
    body: { type: 'invite', email: 'pending-invitee@example.com' },
  });
  t.equal(invite.status, 200, invite.text);
  gh.users.set(7001, githubPerson(7001, 'pending-invitee@example.com'));
  gh.approveAs = 7001;
  const start = await api.request(
    'GET',
    `/user/identities/authorize?provider=github&skip_http_redirect=true&invite_token=${invite.body.hashed_token}`,
    { token: caller.access_token },
  );
  t.equal(start.status, 200, start.text);
  const { location } = await callback(api, await gh.approve(start.body.url));
  const session = fragmentOf(location);
  t.ok(session.access_token, location.href);
  const me = await api.request('GET', '/user', { token: session.access_token });
  t.equal(me.body.id, caller.user.id, "the session is the caller's");
  t.same(me.body.identities.map((i: { provider: string }) => i.provider).sort(), ['email', 'github'], 'the identity joined the caller');
  const invitee = await api.db.query(
    `select email_confirmed_at, (select count(*)::int from identities where user_id = users.id and provider = 'github') as github
       from users where id = $1`,
    [invite.body.id],
  );
  t.same(invitee.rows, [{ email_confirmed_at: null, github: 0 }], 'the invitee is untouched, its invite still pending');
});
