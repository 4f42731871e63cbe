// The organisation's members in the console (the owner and the members who manage settings, the product's
// administrators): who they are, their role and whether they can sign in here; adding one with a first console
// password (generated, shown once on the answer to the form, as `admin console password` prints it), changing a
// role between manage-settings and none, giving a member a new password, removing one. Through the same functions as
// `admin member add|update|remove` and `admin console password`. The owner's role is not changed here, nor is the
// owner removed (an organisation has one owner: `admin member update` hands it over), and a member does not change
// or remove itself (no administrator locks the organisation out of its console by a slip).
import { Router, type Request, type Response } from 'express';
import {
  addMember,
  listMembers,
  MemberRefusal,
  removeMember,
  updateMember,
  type MemberRecord,
  type MemberRole,
} from '../../platform/access/members.js';
import { generatePassword } from '../passwords.js';
import { membersWithPassword, setPassword } from '../sessions.js';
import { html, type Html } from '../html.js';
import { CONSOLE_PATH, when } from '../layout.js';
import { sendCsv } from '../csv.js';
import { recordAction, requireManager, sendPage, sessionOf, type ConsoleDeps } from '../context.js';

/** The roles given here (the owner is one per organisation and handed over with the CLI). */
const GIVEN_ROLES: readonly MemberRole[] = ['manage-settings', 'none'];
const ROLE_WORDS: Record<MemberRole, string> = {
  owner: 'owner',
  'manage-settings': 'manages settings',
  none: 'reads only (none)',
};
const NOTICES: Record<string, string> = {
  role: "The role is changed; it applies from the member's next page.",
  removed: 'The member is removed; its console sessions have ended.',
};

const token = (csrf: string) => html`<input type="hidden" name="_csrf" value="${csrf}">`;
const field = (body: Record<string, unknown>, name: string, max: number) =>
  typeof body[name] === 'string' ? (body[name] as string).trim().slice(0, max) : '';

async function membersPage(
  deps: ConsoleDeps,
  req: Request,
  res: Response,
  shown: Html | null,
  status = 200,
  values: { name?: string; email?: string; role?: string } = {},
): Promise<void> {
  const session = sessionOf(res);
  const [members, withPassword] = await Promise.all([
    listMembers(deps.db, session.organizationId),
    membersWithPassword(deps.db, session.organizationId),
  ]);
  if (req.method === 'GET' && req.query.format === 'csv') {
    sendCsv(
      res,
      'members.csv',
      ['id', 'name', 'email', 'role', 'consolePassword', 'createdAt'],
      members.map((m) => [m.id, m.name, m.email, m.role, withPassword.has(m.id), m.createdAt]),
    );
    return;
  }
  const notice =
    shown ??
    (typeof req.query.notice === 'string' && NOTICES[req.query.notice]
      ? html`<p class="notice" role="status">${NOTICES[req.query.notice]!}</p>`
      : null);
  const csrf = token(session.csrfToken);
  const changeable = (m: MemberRecord) => m.role !== 'owner' && m.id !== session.memberId;
  sendPage(
    res,
    'Members',
    html`${notice}
<p><a href="${CONSOLE_PATH}/members?format=csv">Download as CSV</a></p>
<table>
<thead><tr><th scope="col">Name</th><th scope="col">E-mail</th><th scope="col">Role</th><th scope="col">Console</th><th scope="col">Since</th><th scope="col">Actions</th></tr></thead>
<tbody>${members.map(
      (m) =>
        html`<tr><td>${m.name}${m.id === session.memberId ? html` <span class="muted">(you)</span>` : ''}<br><span class="muted">${m.id}</span></td><td>${m.email}</td><td>${ROLE_WORDS[m.role]}</td><td>${withPassword.has(m.id) ? 'can sign in' : 'no password'}</td><td class="nowrap">${when(m.createdAt)}</td><td>${
          changeable(m)
            ? html`<form class="inline" method="post" action="${CONSOLE_PATH}/members/${m.id}/role">${csrf}<label class="vh" for="role-${m.id}">Role of ${m.name}</label><select id="role-${m.id}" name="role">${GIVEN_ROLES.map((r) => html`<option value="${r}"${m.role === r ? html` selected` : ''}>${ROLE_WORDS[r]}</option>`)}</select> <button type="submit" class="secondary">Change<span class="vh"> the role of ${m.name}</span></button></form>
<form class="inline" method="post" action="${CONSOLE_PATH}/members/${m.id}/password">${csrf}<button type="submit" class="secondary">New password<span class="vh"> for ${m.name}</span></button></form>
<form class="inline" method="post" action="${CONSOLE_PATH}/members/${m.id}/remove">${csrf}<button type="submit" class="secondary">Remove<span class="vh"> ${m.name}</span></button></form>`
            : ''
        }</td></tr>`,
    )}</tbody>
</table>
<h2>Add a member</h2>
<form method="post" action="${CONSOLE_PATH}/members">${csrf}
<p><label for="m-name">Name</label><br><input id="m-name" name="name" required maxlength="200" value="${values.name ?? ''}"></p>
<p><label for="m-email">E-mail (the sign-in name)</label><br><input id="m-email" name="email" type="email" required maxlength="254" value="${values.email ?? ''}"></p>
<p><label for="m-role">Role</label><br><select id="m-role" name="role">${GIVEN_ROLES.map((r) => html`<option value="${r}"${(values.role ?? 'none') === r ? html` selected` : ''}>${ROLE_WORDS[r]}</option>`)}</select></p>
<p><button type="submit">Add the member</button> <span class="muted">A first console password is made and shown once; give it to the member.</span></p>
</form>`,
    status,
  );
}

const passwordShown = (member: { name: string; email: string }, password: string, what: string): Html =>
  html`<div class="notice" role="status"><p>${what} ${member.name} signs in with the e-mail ${member.email} and this password, shown this once and never again (only its hash is kept):</p><p class="secret">${password}</p></div>`;

export function memberRoutes(deps: ConsoleDeps): Router {
  const router = Router();
  router.use('/members', requireManager);
  router.get('/members', (req, res, next) => {
    membersPage(deps, req, res, null).catch(next);
  });

  router.post('/members', async (req, res, next) => {
    try {
      const session = sessionOf(res);
      const body = req.body as Record<string, unknown>;
      const values = {
        name: field(body, 'name', 200),
        email: field(body, 'email', 254),
        role: field(body, 'role', 40),
      };
      if (!(GIVEN_ROLES as readonly string[]).includes(values.role)) {
        recordAction(deps, req, res, 422);
        await membersPage(
          deps,
          req,
          res,
          html`<p class="error" role="alert">Choose the role: manages settings, or reads only.</p>`,
          422,
          values,
        );
        return;
      }
      let member: MemberRecord;
      try {
        member = await addMember(deps.db, session.organizationId, values);
      } catch (error) {
        if (!(error instanceof MemberRefusal)) throw error;
        recordAction(deps, req, res, 422);
        // The platform's words name the CLI's options (--email); the form's fields are named without the dashes.
        await membersPage(
          deps,
          req,
          res,
          html`<p class="error" role="alert">The member was not added: ${error.message.replace(/--(\w+)/g, '$1')}.</p>`,
          422,
          values,
        );
        return;
      }
      const password = generatePassword();
      await setPassword(deps.db, session.organizationId, member.id, password);
      recordAction(deps, req, res, 201);
      await membersPage(deps, req, res, passwordShown(member, password, 'The member is added.'), 201);
    } catch (error) {
      next(error);
    }
  });

  /** The member of the URL when this member may change it; otherwise the refusal is sent and null returned. */
  async function changeableMember(req: Request, res: Response): Promise<MemberRecord | null> {
    const session = sessionOf(res);
    const member = (await listMembers(deps.db, session.organizationId)).find((m) => m.id === String(req.params.id));
    const refusal = !member
      ? null
      : member.id === session.memberId
        ? 'You cannot change or remove yourself here; another administrator can.'
        : member.role === 'owner'
          ? 'The owner is not changed or removed here: an organisation has one owner, handed over with `admin member update`.'
          : null;
    if (!member || refusal) {
      const status = member ? 403 : 404;
      recordAction(deps, req, res, status);
      await membersPage(
        deps,
        req,
        res,
        html`<p class="error" role="alert">${refusal ?? 'There is no such member in this organisation.'}</p>`,
        status,
      );
      return null;
    }
    return member;
  }

  router.post('/members/:id/role', async (req, res, next) => {
    try {
      const member = await changeableMember(req, res);
      if (!member) return;
      const role = field(req.body as Record<string, unknown>, 'role', 40);
      if (!(GIVEN_ROLES as readonly string[]).includes(role)) {
        recordAction(deps, req, res, 422);
        await membersPage(
          deps,
          req,
          res,
          html`<p class="error" role="alert">Choose the role: manages settings, or reads only.</p>`,
          422,
        );
        return;
      }
      await updateMember(deps.db, sessionOf(res).organizationId, member.id, { role });
      recordAction(deps, req, res, 303);
      res.redirect(303, `${CONSOLE_PATH}/members?notice=role`);
    } catch (error) {
      next(error);
    }
  });

  router.post('/members/:id/password', async (req, res, next) => {
    try {
      const member = await changeableMember(req, res);
      if (!member) return;
      const password = generatePassword();
      await setPassword(deps.db, sessionOf(res).organizationId, member.id, password); // ends the member's sessions
      recordAction(deps, req, res, 200);
      await membersPage(
        deps,
        req,
        res,
        passwordShown(member, password, "A new password is set; the member's sessions have ended."),
      );
    } catch (error) {
      next(error);
    }
  });

  router.post('/members/:id/remove', async (req, res, next) => {
    try {
      const member = await changeableMember(req, res);
      if (!member) return;
      try {
        await removeMember(deps.db, sessionOf(res).organizationId, member.id); // its credential and sessions go with it
      } catch (error) {
        if (!(error instanceof MemberRefusal)) throw error;
        recordAction(deps, req, res, 409);
        await membersPage(
          deps,
          req,
          res,
          html`<p class="error" role="alert">${member.name} was not removed: ${error.message}.</p>`,
          409,
        );
        return;
      }
      recordAction(deps, req, res, 303);
      res.redirect(303, `${CONSOLE_PATH}/members?notice=removed`);
    } catch (error) {
      next(error);
    }
  });
  return router;
}
