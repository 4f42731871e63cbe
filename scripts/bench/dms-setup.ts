// What an operator configures before a DMS posts money documents (decision 0033/0034's R03 checks): the van's salesman
// SM01 linked to a member, and the organisation's accounts and its supplier's vendor. The DMS benches share it, so a
// bench organisation is set up as the README tells an operator to set one up.
import type { Actor } from '../../server/domain/actor.js';
import type { Tx } from '../../server/platform/database/transaction.js';
import { addMemberIn } from '../../server/platform/access/members.js';
import { setAccountsIn } from '../../server/platform/access/accounts.js';
import { salespeople } from '../../server/modules/salespeople/service.js';

export async function configureDmsOrganization(tx: Tx, organizationId: string, operator: Actor): Promise<void> {
  const member = await addMemberIn(tx, organizationId, { name: 'Okello James', email: 'okello.james@example.com', role: 'none' });
  await salespeople.create(tx, operator, { salesmanCode: 'SM01', name: 'Okello James', memberId: member.id });
  await setAccountsIn(tx, organizationId, { cashAccount: 'Cash on hand', salesAccount: 'Sales of beverages', promotionsExpenseAccount: 'Trade promotions', vendors: { SUP01: 'Nile Breweries Ltd' } });
}
