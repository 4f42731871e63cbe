// dms connection add | update | show; dms list; dms show; dms reconciliations; dms reprocess; dms actions. An
// organisation's DMS connections (the distributor code each serves, synchronous or not, how flags go back, the
// fiscalise switch, the business day's cut-off), its documents by state, reason, date, salesman and type, one
// document with its flag, the reconciled days per salesman, and the re-processing of rejected or held documents (a
// new flag each; R05 never).
import { InvalidArgumentError, type Command } from 'commander';
import { getOrganization } from '../../../server/platform/access/organizations.js';
import { inTransaction } from '../../../server/platform/database/transaction.js';
import { addEndpoint } from '../../../server/platform/webhooks/endpoints.js';
import { webhookEventTypes } from '../../../server/composition/modules.js';
import {
  addConnection,
  findConnection,
  RETURN_PATHS,
  shownConnection,
  type DmsConnectionSettings,
  type ReturnPath,
} from '../../../server/modules/dms/connections.js';
import { DMS_DOCUMENT_FLAGGED } from '../../../server/modules/dms/flags.js';
import { listActions } from '../../../server/modules/dms/actions.js';
import {
  changeConnection,
  reprocessDocuments,
  showDocument,
  whyNotReprocessable,
} from '../../../server/modules/dms/operations.js';
import { REASON_CODES } from '../../../server/modules/dms/reasons.js';
import { DOCUMENT_SCHEMAS } from '../../../server/modules/dms/canonical.js';
import { listDocuments, listReconciledDays } from '../reads/dms.js';
import { withDatabase } from '../database.js';
import { commaList } from '../options.js';
import { listFormatOptions, printJson, printList, printText } from '../output.js';

const onOff = (raw: string): boolean => {
  if (raw !== 'on' && raw !== 'off') throw new InvalidArgumentError('Expected on or off.');
  return raw === 'on';
};
const returnPath = (raw: string): ReturnPath => {
  if (!(RETURN_PATHS as readonly string[]).includes(raw))
    throw new InvalidArgumentError(`Expected one of ${RETURN_PATHS.join(', ')}.`);
  return raw as ReturnPath;
};
const date = (raw: string): string => {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(raw) || Number.isNaN(Date.parse(`${raw}T00:00:00Z`)))
    throw new InvalidArgumentError('Expected a date YYYY-MM-DD.');
  return raw;
};
const reasons = (raw: string): string[] => {
  const codes = commaList(raw);
  const wrong = codes.filter((code) => !(REASON_CODES as readonly string[]).includes(code) || code === 'R05');
  if (codes.length === 0 || wrong.length > 0)
    throw new InvalidArgumentError(
      `Expected reason codes among ${REASON_CODES.filter((c) => c !== 'R05').join(', ')} (R05 cannot be re-processed).`,
    );
  return codes;
};

const FLAG_STATES = ['received', 'posted', 'rejected', 'superseded'] as const;
const oneOrMore =
  (what: string, known: readonly string[]) =>
  (raw: string): string[] => {
    const values = commaList(raw);
    const wrong = values.filter((value) => !known.includes(value));
    if (values.length === 0 || wrong.length > 0)
      throw new InvalidArgumentError(
        `${wrong.length > 0 ? `Unknown ${what} ${wrong.join(', ')}; e` : 'E'}xpected one or more of ${known.join(', ')} (comma-separated).`,
      );
    return [...new Set(values)];
  };
const salesmanCode = (raw: string): string => {
  if (!/^\S{1,64}$/.test(raw))
    throw new InvalidArgumentError('Expected a salesman code as the DMS sends it (no spaces).');
  return raw;
};

interface ConnectionOptions {
  org: string;
  system: string;
  distributorCode?: string;
  synchronous?: boolean;
  returnPath?: ReturnPath;
  callbackUrl?: string;
  fiscalise?: boolean;
  cutOff?: string;
  json?: boolean;
}

function withConnectionOptions(command: Command): Command {
  return command
    .requiredOption('--org <id>', 'organisation id')
    .option('--system <name>', 'the DMS format, as the paths name it', 'canonical')
    .option('--synchronous <on|off>', 'post before answering (batches of at most 50)', onOff)
    .option('--return-path <path>', `how final flags go back: ${RETURN_PATHS.join(', ')}`, returnPath)
    .option(
      '--callback-url <url>',
      'with --return-path callback: where the signed flag callbacks (dms.document.flagged) go',
    )
    .option(
      '--fiscalise <on|off>',
      'submit its invoices and credit notes to the fiscal system (off cancels those not sent yet)',
      onOff,
    )
    .option('--cut-off <HH:MM>', 'the end of the business day')
    .option('--json', 'print the connection as JSON');
}

/** The callback's webhook endpoint (subscribed to dms.document.flagged), made when a callback URL is given. */
async function callbackEndpoint(options: ConnectionOptions): Promise<{ id: string; secret: string } | null> {
  if (options.callbackUrl === undefined) return null;
  return withDatabase((db, config) =>
    addEndpoint(
      db,
      {
        policy: { allowLoopback: config.webhookAllowLoopback },
        secretKey: config.webhookSecretKey,
        eventTypes: webhookEventTypes,
      },
      {
        organizationId: options.org,
        url: options.callbackUrl!,
        events: [DMS_DOCUMENT_FLAGGED],
      },
    ),
  );
}

function settingsOf(options: ConnectionOptions, endpoint: { id: string } | null): DmsConnectionSettings {
  return {
    ...(options.distributorCode !== undefined ? { distributorCode: options.distributorCode } : {}),
    ...(options.synchronous !== undefined ? { synchronous: options.synchronous } : {}),
    ...(options.returnPath !== undefined ? { returnPath: options.returnPath } : {}),
    ...(endpoint ? { webhookEndpointId: endpoint.id } : {}),
    ...(options.fiscalise !== undefined ? { fiscalise: options.fiscalise } : {}),
    ...(options.cutOff !== undefined ? { cutOffTime: options.cutOff } : {}),
  };
}

function print(
  connection: ReturnType<typeof shownConnection>,
  json: boolean | undefined,
  extra: Record<string, unknown> = {},
): void {
  if (json) printJson({ ...connection, ...extra });
  else {
    for (const [key, value] of Object.entries({ ...connection, ...extra }))
      printText(`${key}\t${value === null ? '' : String(value)}`);
  }
}

export function registerDmsCommands(program: Command): void {
  const dms = program.command('dms').description('DMS connections, documents and their flags');
  const connection = dms.command('connection').description("an organisation's DMS connection");

  withConnectionOptions(connection.command('add').description('connect a DMS for one distributor code'))
    .requiredOption('--distributor-code <code>', 'the one distributor code it serves (documents for another: R07)')
    .action(async (options: ConnectionOptions & { distributorCode: string }) => {
      await withDatabase((db) => getOrganization(db, options.org));
      const endpoint = await callbackEndpoint(options);
      const added = await withDatabase((db) =>
        inTransaction(db, (tx) =>
          addConnection(tx, options.org, options.system, {
            ...settingsOf(options, endpoint),
            distributorCode: options.distributorCode,
          }),
        ),
      );
      print(shownConnection(added), options.json, endpoint ? { callbackSecret: endpoint.secret } : {});
      if (endpoint && !options.json)
        printText('The callback signing secret is shown only now; give it to the DMS to verify Service-Signature.');
    });

  withConnectionOptions(connection.command('update').description('change a connection (only the options given)'))
    .option('--distributor-code <code>', 'the one distributor code it serves')
    .action(async (options: ConnectionOptions) => {
      await withDatabase((db) => getOrganization(db, options.org));
      const endpoint = await callbackEndpoint(options);
      const { connection: changed, cancelled } = await withDatabase((db) =>
        inTransaction(db, (tx) => changeConnection(tx, options.org, options.system, settingsOf(options, endpoint))),
      );
      print(shownConnection(changed), options.json, {
        ...(endpoint ? { callbackSecret: endpoint.secret } : {}),
        ...(options.fiscalise === false ? { fiscalSubmissionsCancelled: cancelled } : {}),
      });
    });

  connection
    .command('show')
    .description('a connection')
    .requiredOption('--org <id>', 'organisation id')
    .option('--system <name>', 'the DMS format', 'canonical')
    .option('--json', 'print it as JSON')
    .action(async (options: { org: string; system: string; json?: boolean }) => {
      const found = await withDatabase(async (db) => {
        await getOrganization(db, options.org);
        return findConnection(db, options.org, options.system);
      });
      if (!found)
        throw new Error(
          `The organisation has no ${options.system} connection; add one with \`admin dms connection add\`.`,
        );
      print(shownConnection(found), options.json);
    });

  dms
    .command('show')
    .description('one document: its flag, its content and what posting found')
    .argument('<documentId>', 'the dmd_ id of the flag')
    .requiredOption('--org <id>', 'organisation id')
    .option('--json', 'the same JSON (it is always JSON)')
    .action(async (documentId: string, options: { org: string }) => {
      printJson(await withDatabase((db) => showDocument(db, options.org, documentId)));
    });

  listFormatOptions(
    dms
      .command('list')
      .description(
        'documents with their flags, newest change first, filtered by state, reason, business date, salesman and document type',
      )
      .requiredOption('--org <id>', 'organisation id')
      .option('--system <name>', "only this DMS format's connection (all by default)")
      .option('--state <states>', `flag states: ${FLAG_STATES.join(', ')}`, oneOrMore('state', FLAG_STATES))
      .option(
        '--reason <codes>',
        'reason codes of rejected documents, for example R03,R08',
        oneOrMore('reason code', REASON_CODES),
      )
      .option('--date <YYYY-MM-DD>', "the documents' business date (documentDate)", date)
      .option('--salesman <code>', 'the salesman code on the documents', salesmanCode)
      .option(
        '--type <types>',
        'document types, for example CS,VR,route_settlement',
        oneOrMore('document type', [...DOCUMENT_SCHEMAS.keys()]),
      )
      .option('--limit <n>', 'at most this many (1 to 1000)', positiveLimit, 100),
    'print {"documents": [...]} (each a flag with system, documentDate and salesmanCode)',
  ).action(
    async (options: {
      org: string;
      system?: string;
      state?: string[];
      reason?: string[];
      date?: string;
      salesman?: string;
      type?: string[];
      limit: number;
      json?: boolean;
      csv?: boolean;
    }) => {
      const documents = await withDatabase(async (db) => {
        await getOrganization(db, options.org);
        return listDocuments(db, options.org, {
          system: options.system,
          states: options.state,
          reasons: options.reason,
          date: options.date,
          salesman: options.salesman,
          types: options.type,
          limit: options.limit,
        });
      });
      printList(
        options,
        documents,
        [
          { header: 'DOCUMENT', value: (d) => d.documentId },
          { header: 'TYPE', value: (d) => d.documentType },
          { header: 'NUMBER', value: (d) => d.documentNumber },
          { header: 'DATE', value: (d) => d.documentDate },
          { header: 'SALESMAN', value: (d) => d.salesmanCode },
          { header: 'STATE', value: (d) => d.state },
          { header: 'REASON', value: (d) => d.reasonCode },
          { header: 'WHY', value: (d) => d.reasonText ?? d.note ?? '' },
          { header: 'UPDATED', value: (d) => d.updatedAt },
        ],
        { empty: 'No document matches.', json: (rows) => ({ documents: rows }) },
      );
    },
  );

  listFormatOptions(
    dms
      .command('reconciliations')
      .description(
        'the reconciled days: per salesman and business date, balanced or with differences (newest day first)',
      )
      .requiredOption('--org <id>', 'organisation id')
      .option('--system <name>', "only this DMS format's connection (all by default)")
      .option('--salesman <code>', 'one salesman', salesmanCode)
      .option('--date <YYYY-MM-DD>', 'one business date', date)
      .option(
        '--status <status>',
        'balanced or differences',
        (raw: string) => oneOrMore('status', ['balanced', 'differences'])(raw)[0]!,
      )
      .option('--differences', "list each day's differences under it (text output)")
      .option('--limit <n>', 'at most this many days (1 to 1000)', positiveLimit, 100),
    'print {"reconciliations": [...]} as GET /dms/{system}/reconciliations shows them',
  ).action(
    async (options: {
      org: string;
      system?: string;
      salesman?: string;
      date?: string;
      status?: string;
      differences?: boolean;
      limit: number;
      json?: boolean;
      csv?: boolean;
    }) => {
      const days = await withDatabase(async (db) => {
        await getOrganization(db, options.org);
        return listReconciledDays(db, options.org, options);
      });
      printList(
        options,
        days,
        [
          { header: 'DATE', value: (d) => d.businessDate },
          { header: 'SALESMAN', value: (d) => d.salesmanCode },
          { header: 'STATUS', value: (d) => d.status },
          { header: 'DIFFERENCES', value: (d) => d.differenceCount },
          { header: 'CHECKED', value: (d) => d.checkedAt },
        ],
        { empty: 'No reconciled day matches.', json: (rows) => ({ reconciliations: rows }) },
      );
      if (options.differences && !options.json && !options.csv) {
        for (const day of days.filter((d) => d.differences.length > 0)) {
          printText(
            '',
            `${day.businessDate} ${day.salesmanCode}:`,
            ...day.differences.map((difference) => `  ${difference.kind.padEnd(19)}  ${difference.message}`),
          );
        }
      }
    },
  );

  dms
    .command('reprocess')
    .description('post again rejected documents (not R05) and held ones; each gets a new flag')
    .argument('[documentId]', 'one document (dmd_ id)')
    .requiredOption('--org <id>', 'organisation id')
    .option('--batch <id>', 'every such document of a batch (dmb_ id)')
    .option(
      '--date <YYYY-MM-DD>',
      'with --reason: every document of this business date rejected for one of the reasons',
      date,
    )
    .option('--reason <codes>', 'with --date: reason codes, for example R08,R03', reasons)
    .option('--json', 'print {"reprocessed": [...]}')
    .action(
      async (
        documentId: string | undefined,
        options: { org: string; batch?: string; date?: string; reason?: string[]; json?: boolean },
      ) => {
        const ways = [documentId !== undefined, options.batch !== undefined, options.date !== undefined].filter(
          Boolean,
        ).length;
        if (ways !== 1) throw new Error('Name one document, or --batch ID, or --date YYYY-MM-DD with --reason CODES.');
        if ((options.date === undefined) !== (options.reason === undefined))
          throw new Error('--date and --reason go together.');
        const ids = await withDatabase(async (db) => {
          await getOrganization(db, options.org);
          const done = await reprocessDocuments(db, options.org, {
            documentId,
            batchId: options.batch,
            date: options.date,
            reasons: options.reason,
          });
          if (done.length === 0 && documentId)
            throw new Error(
              (await whyNotReprocessable(db, options.org, documentId)) ?? `${documentId} cannot be re-processed.`,
            );
          return done;
        });
        if (options.json) printJson({ reprocessed: ids });
        else
          printText(
            ids.length === 0
              ? 'Nothing to re-process.'
              : `${ids.length} document(s) queued again with a new flag: ${ids.join(', ')}`,
          );
      },
    );

  dms
    .command('actions')
    .description('what the service did towards the DMS (flag files, flag callbacks, re-processes), newest change first')
    .requiredOption('--org <id>', 'organisation id')
    .option('--limit <n>', 'how many (1 to 1000)', positiveLimit, 50);
  listFormatOptions(dms.commands.at(-1)!, 'print {"actions": [...]}').action(
    async (options: { org: string; limit: number; json?: boolean; csv?: boolean }) => {
      const actions = await withDatabase(async (db) => {
        await getOrganization(db, options.org);
        return listActions(db, options.org, options.limit);
      });
      printList(
        options,
        actions,
        [
          { header: 'UPDATED', value: (a) => a.updatedAt },
          { header: 'KIND', value: (a) => a.kind },
          { header: 'STATUS', value: (a) => a.status },
          { header: 'SUBJECT', value: (a) => a.subjectId },
          { header: 'DETAIL', value: (a) => a.detail ?? '' },
        ],
        { empty: 'No action yet.', json: (rows) => ({ actions: rows }) },
      );
    },
  );
}

function positiveLimit(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new InvalidArgumentError('a whole number from 1 to 1000');
  return n;
}
