// What the external system holds for a posting, read there now through its connector (the QuickBooks or EFRIS client,
// whichever the organisation's connection names: the real system or the simulators): the operator console shows it
// beside the service's own record, so an accountant can see that the two agree (or where they do not) without
// opening QuickBooks. A read only: nothing is written here or there.
import type { Db } from '../../platform/database/transaction.js';
import {
  accountingConnectorOf,
  fiscalConnectorOf,
  readConnection,
  type ConnectorSettings,
} from '../../connectors/connections.js';
import type { AccountingHeld, AccountingType, ConnectorFailure, FiscalReceipt } from '../../connectors/types.js';
import type { PostingView } from './operations.js';

const ACCOUNTING_TYPES: readonly AccountingType[] = [
  'Invoice',
  'Payment',
  'CreditMemo',
  'RefundReceipt',
  'Bill',
  'JournalEntry',
];

export type HeldThere =
  /** The accounting system's document under the posting's ref (null: it holds none: deleted there, or never made). */
  | { kind: 'accounting'; held: AccountingHeld | null }
  /** The fiscal system's document under the posting's FDN (null: it holds none). */
  | { kind: 'fiscal'; receipt: FiscalReceipt | null }
  /** Nothing to ask for: the posting has no ref there yet (not posted, or a credit note application waiting). */
  | { kind: 'nothing-sent'; why: string }
  | { kind: 'no-connection'; why: string }
  /** The system did not answer the read (down, refused, or not reachable from this process). */
  | { kind: 'unanswered'; why: string };

const failureText = (failure: ConnectorFailure) =>
  failure.kind === 'rejected' ? `${failure.code} ${failure.message}` : failure.message;

export async function readHeldThere(
  db: Db,
  settings: ConnectorSettings,
  organizationId: string,
  posting: PostingView,
): Promise<HeldThere> {
  const system = posting.system === 'fiscal' ? 'fiscal' : 'accounting';
  if (posting.externalRef === null)
    return {
      kind: 'nothing-sent',
      why: `The posting has no reference in the ${system} system yet (${posting.status}).`,
    };
  if (system === 'fiscal' && posting.status !== 'posted') {
    return {
      kind: 'nothing-sent',
      why: `The credit note's application ${posting.externalRef} waits for the tax authority; it has no fiscal number yet.`,
    };
  }
  const connection = await readConnection(db, organizationId, system);
  if (!connection)
    return {
      kind: 'no-connection',
      why: `The organisation has no ${system} connection (\`admin connector set\` makes one).`,
    };
  if (!connection.enabled) return { kind: 'no-connection', why: `The ${system} connection is turned off.` };
  try {
    if (system === 'fiscal') {
      const read = await fiscalConnectorOf(connection, settings).readReceipt(posting.externalRef);
      return read.ok ? { kind: 'fiscal', receipt: read.value } : { kind: 'unanswered', why: failureText(read.failure) };
    }
    const type = posting.externalType as AccountingType | null;
    if (type === null || !ACCOUNTING_TYPES.includes(type))
      return {
        kind: 'nothing-sent',
        why: `The posting names no document type of the accounting system (${type ?? 'none'}).`,
      };
    const read = await accountingConnectorOf(connection, settings).read({ type, id: posting.externalRef });
    return read.ok ? { kind: 'accounting', held: read.value } : { kind: 'unanswered', why: failureText(read.failure) };
  } catch (error) {
    // A connection this process cannot use (simulators not run here, credentials that do not open): said, not a 500.
    return { kind: 'unanswered', why: (error as Error).message };
  }
}
