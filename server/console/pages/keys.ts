// API keys in the console (the owner and the members who manage settings, as the product says of administrators):
// the organisation's keys, a new key with chosen scopes (its secret shown once, on the answer to the form, never
// stored), revocation; through the same functions as `admin key create|revoke`, the member recorded as the key's maker.
import { Router, type Request, type Response } from 'express';
import { createApiKey, listApiKeys, revokeApiKey } from '../../platform/access/api-keys.js';
import { scopeCatalogue } from '../../platform/access/scopes.js';
import { html, type Html } from '../html.js';
import { CONSOLE_PATH, when } from '../layout.js';
import { sendCsv } from '../csv.js';
import { recordAction, requireManager, sendNotFound, sendPage, sessionOf, type ConsoleDeps } from '../context.js';

async function keysPage(
  deps: ConsoleDeps,
  req: Request,
  res: Response,
  shown: Html | null,
  status = 200,
): Promise<void> {
  const session = sessionOf(res);
  const keys = await listApiKeys(deps.db, session.organizationId);
  if (req.method === 'GET' && req.query.format === 'csv') {
    sendCsv(
      res,
      'api-keys.csv',
      ['id', 'name', 'prefix', 'environment', 'scopes', 'createdByMemberId', 'createdAt', 'expiresAt', 'revokedAt'],
      keys.map((k) => [
        k.id,
        k.name,
        k.prefix,
        k.environment,
        k.scopes.join(' '),
        k.createdByMemberId,
        k.createdAt,
        k.expiresAt,
        k.revokedAt,
      ]),
    );
    return;
  }
  const token = html`<input type="hidden" name="_csrf" value="${session.csrfToken}">`;
  const catalogue = scopeCatalogue();
  sendPage(
    res,
    'API keys',
    html`${shown}
<p><a href="${CONSOLE_PATH}/keys?format=csv">Download as CSV</a></p>
${
  keys.length === 0
    ? html`<p>No keys yet.</p>`
    : html`<table>
<thead><tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Scopes</th><th scope="col">Made</th><th scope="col">State</th><th scope="col">Action</th></tr></thead>
<tbody>${keys.map((k) => html`<tr><td>${k.name}</td><td>${k.prefix}</td><td>${k.scopes.join(', ')}</td><td>${when(k.createdAt)}${k.createdByMemberId ? html`<br><span class="muted">by ${k.createdByMemberId}</span>` : ''}</td><td>${k.revokedAt ? `revoked ${when(k.revokedAt)}` : k.expiresAt ? `expires ${when(k.expiresAt)}` : 'active'}</td><td>${k.revokedAt ? '' : html`<form class="inline" method="post" action="${CONSOLE_PATH}/keys/${k.id}/revoke">${token}<button type="submit" class="secondary">Revoke<span class="vh"> key ${k.name} (${k.prefix})</span></button></form>`}</td></tr>`)}</tbody>
</table>`
}
<h2>Make a key</h2>
<form method="post" action="${CONSOLE_PATH}/keys">${token}
<p><label for="key-name">Name</label><br><input id="key-name" name="name" required maxlength="100" value="Integration"></p>
<fieldset><legend>Scopes</legend>
${Object.entries(catalogue).map(([scope, description]) => html`<div><input type="checkbox" id="scope-${scope.replace(/:/g, '-')}" name="scope" value="${scope}"> <label for="scope-${scope.replace(/:/g, '-')}">${scope}</label> <span class="muted">${description.split('\n')[0]?.slice(0, 140)}</span></div>`)}
</fieldset>
<p><button type="submit">Make the key</button></p>
</form>`,
    status,
  );
}

export function keyRoutes(deps: ConsoleDeps): Router {
  const router = Router();
  router.use('/keys', requireManager);
  router.get('/keys', (req, res, next) => {
    keysPage(deps, req, res, null).catch(next);
  });
  router.post('/keys', async (req, res, next) => {
    try {
      const session = sessionOf(res);
      const body = req.body as Record<string, unknown>;
      const scopes = (Array.isArray(body.scope) ? body.scope : body.scope === undefined ? [] : [body.scope]).filter(
        (s): s is string => typeof s === 'string',
      );
      const name = typeof body.name === 'string' ? body.name.trim().slice(0, 100) : '';
      const known = scopeCatalogue();
      if (name === '' || scopes.length === 0 || scopes.some((s) => !(s in known))) {
        await keysPage(
          deps,
          req,
          res,
          html`<p class="error" role="alert">Give the key a name and choose at least one scope.</p>`,
          422,
        );
        return;
      }
      const issued = await createApiKey(deps.db, {
        organizationId: session.organizationId,
        environment: deps.environment,
        scopes,
        name,
        createdByMemberId: session.memberId,
      });
      recordAction(deps, req, res, 201);
      await keysPage(
        deps,
        req,
        res,
        html`<div class="notice" role="status"><p>Key ${name} is made. Copy its secret now: it is shown this once and never again.</p><p class="secret">${issued.secret}</p></div>`,
        201,
      );
    } catch (error) {
      next(error);
    }
  });
  router.post('/keys/:id/revoke', async (req, res, next) => {
    try {
      const session = sessionOf(res);
      const id = String(req.params.id);
      const key = (await listApiKeys(deps.db, session.organizationId)).find((k) => k.id === id && k.revokedAt === null);
      if (!key) {
        sendNotFound(res, `There is no active key ${id} in this organisation.`);
        return;
      }
      await revokeApiKey(deps.db, id);
      recordAction(deps, req, res, 303);
      res.redirect(303, `${CONSOLE_PATH}/keys`);
    } catch (error) {
      next(error);
    }
  });
  return router;
}
