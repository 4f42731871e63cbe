// Members' sign-in and sessions. A session is a row in Postgres (console_sessions), so any API process can serve it
// and signing out ends it everywhere; the cookie carries a random token whose SHA-256 alone is stored. A session ends
// after IDLE_MS without a request or LIFETIME_MS after sign-in, whichever comes first. LOCK_AFTER failed sign-ins in
// a row lock the credential for LOCK_MS.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../platform/database/transaction.js';
import { newId } from '../platform/ids.js';
import type { MemberRole } from '../platform/access/members.js';
import { hashPassword, passwordProblem, spendVerifyTime, verifyPassword } from './passwords.js';

export const IDLE_MS = 30 * 60 * 1000;
export const LIFETIME_MS = 12 * 60 * 60 * 1000;
export const LOCK_AFTER = 5;
export const LOCK_MS = 15 * 60 * 1000;
/** last_seen_at is written at most this often (a page's requests do not each write the row). */
const TOUCH_EVERY_MS = 30 * 1000;

export interface ConsoleSession {
  id: string;
  organizationId: string;
  organizationName: string;
  memberId: string;
  memberName: string;
  email: string;
  role: MemberRole;
  csrfToken: string;
}

export const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex');

/** Sets (or replaces) a member's console password. */
export async function setPassword(db: Db, organizationId: string, memberId: string, password: string): Promise<void> {
  const problem = passwordProblem(password);
  if (problem) throw new Error(problem);
  const member = await db
    .selectFrom('members')
    .select('id')
    .where('organization_id', '=', organizationId)
    .where('id', '=', memberId)
    .executeTakeFirst();
  if (!member) throw new Error(`no member ${memberId} in ${organizationId} (member list --org shows them)`);
  const passwordHash = await hashPassword(password);
  await db
    .insertInto('console_credentials')
    .values({ organization_id: organizationId, member_id: memberId, password_hash: passwordHash })
    .onConflict((oc) =>
      oc
        .columns(['organization_id', 'member_id'])
        .doUpdateSet({ password_hash: passwordHash, failed_attempts: 0, locked_until: null, updated_at: new Date() }),
    )
    .execute();
  // A new password ends the member's sessions.
  await db
    .deleteFrom('console_sessions')
    .where('organization_id', '=', organizationId)
    .where('member_id', '=', memberId)
    .execute();
}

export type SignInResult =
  | { kind: 'signed-in'; token: string; session: ConsoleSession }
  | { kind: 'refused' }
  | { kind: 'locked'; until: Date }
  | { kind: 'ambiguous' };

/**
 * Checks an e-mail and password. An e-mail is unique within an organisation, not across them: when it names
 * members of several organisations whose passwords all match, the organisation must be given. A wrong password
 * counts against every credential of the e-mail it was tried on; a locked one is refused before its password is
 * checked (the time is spent anyway).
 */
export async function signIn(
  db: Db,
  input: { email: string; password: string; organizationId?: string },
): Promise<SignInResult> {
  let query = db
    .selectFrom('console_credentials as c')
    .innerJoin('members as m', (join) =>
      join.onRef('m.organization_id', '=', 'c.organization_id').onRef('m.id', '=', 'c.member_id'),
    )
    .select(['c.organization_id', 'c.member_id', 'c.password_hash', 'c.locked_until'])
    .where('m.email', '=', input.email.trim().toLowerCase());
  if (input.organizationId) query = query.where('c.organization_id', '=', input.organizationId);
  const candidates = await query.limit(20).execute();
  if (candidates.length === 0) {
    await spendVerifyTime(input.password);
    return { kind: 'refused' };
  }
  const now = Date.now();
  const matched: typeof candidates = [];
  let lockedUntil: Date | null = null;
  for (const candidate of candidates) {
    if (candidate.locked_until && candidate.locked_until.getTime() > now) {
      await spendVerifyTime(input.password);
      lockedUntil = candidate.locked_until;
      continue;
    }
    if (await verifyPassword(input.password, candidate.password_hash)) {
      matched.push(candidate);
      continue;
    }
    // One statement: the count and the lock decided by the row as it is now (two failures racing both count).
    await sql`
      UPDATE console_credentials
         SET failed_attempts = CASE WHEN failed_attempts + 1 >= ${LOCK_AFTER} THEN 0 ELSE failed_attempts + 1 END,
             locked_until = CASE WHEN failed_attempts + 1 >= ${LOCK_AFTER} THEN now() + ${`${LOCK_MS} milliseconds`}::interval ELSE locked_until END,
             updated_at = now()
       WHERE organization_id = ${candidate.organization_id} AND member_id = ${candidate.member_id}`.execute(db);
  }
  if (matched.length > 1) return { kind: 'ambiguous' };
  const found = matched[0];
  if (!found)
    return lockedUntil && candidates.length === 1 ? { kind: 'locked', until: lockedUntil } : { kind: 'refused' };
  await db
    .updateTable('console_credentials')
    .set({ failed_attempts: 0, locked_until: null, updated_at: new Date() })
    .where('organization_id', '=', found.organization_id)
    .where('member_id', '=', found.member_id)
    .execute();
  // The member's sessions that have ended and were never used again go now (the scheduled sweep takes the others).
  await db
    .deleteFrom('console_sessions')
    .where('organization_id', '=', found.organization_id)
    .where('member_id', '=', found.member_id)
    .where((eb) => eb.or([eb('expires_at', '<=', new Date(now)), eb('last_seen_at', '<=', new Date(now - IDLE_MS))]))
    .execute();
  const token = randomBytes(32).toString('base64url');
  const id = newId('css');
  await db
    .insertInto('console_sessions')
    .values({
      organization_id: found.organization_id,
      id,
      member_id: found.member_id,
      token_hash: tokenHash(token),
      csrf_token: randomBytes(24).toString('base64url'),
      expires_at: new Date(now + LIFETIME_MS),
    })
    .execute();
  const session = await sessionById(db, found.organization_id, id);
  return { kind: 'signed-in', token, session: session! };
}

async function sessionById(db: Db, organizationId: string, id: string): Promise<ConsoleSession | null> {
  const row = await sessionQuery(db)
    .where('s.organization_id', '=', organizationId)
    .where('s.id', '=', id)
    .executeTakeFirst();
  return row ? toSession(row) : null;
}

function sessionQuery(db: Db) {
  return db
    .selectFrom('console_sessions as s')
    .innerJoin('members as m', (join) =>
      join.onRef('m.organization_id', '=', 's.organization_id').onRef('m.id', '=', 's.member_id'),
    )
    .innerJoin('organizations as o', 'o.id', 's.organization_id')
    .select([
      's.id',
      's.organization_id',
      's.member_id',
      's.csrf_token',
      's.last_seen_at',
      's.expires_at',
      'm.name as member_name',
      'm.email',
      'm.role',
      'o.name as organization_name',
    ]);
}

type SessionRow = Awaited<ReturnType<ReturnType<typeof sessionQuery>['executeTakeFirstOrThrow']>>;

function toSession(row: SessionRow): ConsoleSession {
  return {
    id: row.id,
    organizationId: row.organization_id,
    organizationName: row.organization_name,
    memberId: row.member_id,
    memberName: row.member_name,
    email: row.email,
    role: row.role as MemberRole,
    csrfToken: row.csrf_token,
  };
}

/** The live session of a cookie's token, its idle clock restarted; null (and the row deleted) once it has ended. */
export async function resumeSession(db: Db, token: string): Promise<ConsoleSession | null> {
  if (token.length < 20 || token.length > 100) return null;
  const row = await sessionQuery(db).where('s.token_hash', '=', tokenHash(token)).executeTakeFirst();
  if (!row) return null;
  const now = Date.now();
  if (row.expires_at.getTime() <= now || row.last_seen_at.getTime() + IDLE_MS <= now) {
    await db
      .deleteFrom('console_sessions')
      .where('organization_id', '=', row.organization_id)
      .where('id', '=', row.id)
      .execute();
    return null;
  }
  if (now - row.last_seen_at.getTime() > TOUCH_EVERY_MS) {
    await db
      .updateTable('console_sessions')
      .set({ last_seen_at: new Date(now) })
      .where('organization_id', '=', row.organization_id)
      .where('id', '=', row.id)
      .execute();
  }
  return toSession(row);
}

export async function endSession(db: Db, session: ConsoleSession): Promise<void> {
  await db
    .deleteFrom('console_sessions')
    .where('organization_id', '=', session.organizationId)
    .where('id', '=', session.id)
    .execute();
}

/** The members of an organisation who have a console password (the members page says who can sign in). */
export async function membersWithPassword(db: Db, organizationId: string): Promise<Set<string>> {
  const rows = await db
    .selectFrom('console_credentials')
    .select('member_id')
    .where('organization_id', '=', organizationId)
    .execute();
  return new Set(rows.map((row) => row.member_id));
}

/**
 * Deletes the sessions that have ended (idle for IDLE_MS, or past their lifetime) in every organisation: a session
 * whose cookie never comes back is otherwise kept until its member signs in again. Run by a scheduled job
 * (`console.sessions.purge`, server/composition/jobs.ts). Returns how many went.
 */
export async function purgeEndedSessions(db: Db, now = new Date()): Promise<number> {
  const result = await db
    .deleteFrom('console_sessions')
    .where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_seen_at', '<=', new Date(now.getTime() - IDLE_MS))]))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Constant-time comparison of a form's CSRF token with the expected one. */
export function sameToken(given: unknown, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
