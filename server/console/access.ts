// What a signed-in member may see and do in the console. Members hold no key, so the console gives each role the
// scopes an API key of the same person would be given (decision 0041): the owner and the members who manage
// settings act as administrators (every scope, keys, webhooks, re-processing), everyone else (role none: salesmen,
// clerks) reads without personal data (no customers:pii) and changes nothing. Personal fields of stored documents
// are removed by the spec's marks (server/platform/personal-fields.ts), as the API log and webhooks remove them.
import { operatorActor, type OperatorActor } from '../platform/access/actor.js';
import { actingOrganization, getOrganization } from '../platform/access/organizations.js';
import { PII_SCOPE, scopeCatalogue } from '../platform/access/scopes.js';
import type { MemberRole } from '../platform/access/members.js';
import type { Db } from '../platform/database/transaction.js';
import { personalFieldsOf } from '../platform/personal-fields.js';
import { apiDocument } from '../platform/spec.js';
import type { ConsoleSession } from './sessions.js';

const MANAGING: readonly MemberRole[] = ['owner', 'manage-settings'];

/** Whether the member may change things (re-process, keys, webhooks): the owner and the members who manage settings. */
export const manages = (session: ConsoleSession) => MANAGING.includes(session.role);

export function scopesOf(role: MemberRole): Set<string> {
  const all = Object.keys(scopeCatalogue());
  if (MANAGING.includes(role)) return new Set(all);
  return new Set(all.filter((scope) => scope.endsWith(':read') && scope !== PII_SCOPE));
}

export const seesPersonalData = (session: ConsoleSession) => scopesOf(session.role).has(PII_SCOPE);

/** The member as the actor of what it does through the console (an operator actor named after it, with its role's scopes). */
export async function memberActor(db: Db, session: ConsoleSession): Promise<OperatorActor> {
  const organization = actingOrganization(await getOrganization(db, session.organizationId));
  return { ...operatorActor(organization, `console ${session.memberId}`), scopes: scopesOf(session.role) };
}

/** A stored DMS document as the member may see it: whole with customers:pii, without its personal fields otherwise. */
export function dmsContentFor(session: ConsoleSession, content: unknown): unknown {
  return seesPersonalData(session) ? content : personalFieldsOf(apiDocument).schema('DmsDocument').apply(content);
}
