// trip list | show | sheet: an operator's reading of delivery trips, with names where the API gives ids. `show` is
// the trip with its van stock per product (loaded, sold, returned, counted); `sheet` is the settlement sheet as
// GET /trips/{id}/settlement computes it, its stock lines named. --json adds `productCode` and `productName` to each
// stock line of the API's sheet; --csv prints the stock lines (the money figures are one row each in the text).
import { InvalidArgumentError, type Command } from 'commander';
import { operatorActor } from '../../../server/platform/access/actor.js';
import { actingOrganization, getOrganization } from '../../../server/platform/access/organizations.js';
import { getTrip, listTrips } from '../../../server/modules/trips/service.js';
import { getTripSettlement } from '../../../server/modules/settlements/service.js';
import type { Settlement } from '../../../server/modules/settlements/sheet.js';
import { withDatabase } from '../database.js';
import { fields, listFormatOptions, printJson, printList, printText, type Column } from '../output.js';
import { label, productNames, salespersonNames } from '../reads/names.js';

const TRIP_STATUSES = ['loading', 'in_transit', 'returned', 'closed'];

function calendarDate(raw: string): string {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(raw) || new Date(`${raw}T00:00:00Z`).toISOString().slice(0, 10) !== raw)
    throw new InvalidArgumentError('Expected a calendar date YYYY-MM-DD.');
  return raw;
}

type NamedStockLine = Settlement['stock'][number] & { productCode: string | null; productName: string | null };

/** The trip's settlement sheet, read as the API reads it, with each stock line's product code and name. */
async function namedSheet(org: string, tripId: string, command: string) {
  return withDatabase(async (db) => {
    const actor = operatorActor(actingOrganization(await getOrganization(db, org)), command);
    const trip = await getTrip(db, actor, tripId);
    const sheet = await getTripSettlement(db, actor, tripId);
    const products = await productNames(
      db,
      org,
      sheet.stock.map((line) => line.productId),
    );
    const people = await salespersonNames(db, org, [trip.salespersonId]);
    const stock: NamedStockLine[] = sheet.stock.map((line) => ({
      ...line,
      productCode: products.get(line.productId)?.code ?? null,
      productName: products.get(line.productId)?.name ?? null,
    }));
    return {
      trip,
      sheet: { ...sheet, stock },
      salesperson: label(people.get(trip.salespersonId ?? ''), trip.salespersonId),
    };
  });
}

const STOCK_COLUMNS: Column<NamedStockLine>[] = [
  { header: 'PRODUCT', value: (l) => l.productCode ?? l.productId },
  { header: 'NAME', value: (l) => l.productName ?? '' },
  { header: 'UNIT', value: (l) => l.unit },
  { header: 'LOADED', value: (l) => l.loaded },
  { header: 'SOLD', value: (l) => l.sold },
  { header: 'RETURNED', value: (l) => l.returned },
  { header: 'DAMAGED', value: (l) => l.returnedDamaged },
  { header: 'COUNTED', value: (l) => l.counted ?? '' },
  { header: 'DIFFERENCE', value: (l) => l.difference ?? '' },
];

export function registerTripSheetCommands(trip: Command): void {
  listFormatOptions(
    trip
      .command('list')
      .description("an organisation's trips, newest first, with the salesperson's name")
      .requiredOption('--org <org-id>', 'the organisation')
      .option('--status <status>', TRIP_STATUSES.join(', '), (raw: string) => {
        if (!TRIP_STATUSES.includes(raw))
          throw new InvalidArgumentError(`Expected one of ${TRIP_STATUSES.join(', ')}.`);
        return raw;
      })
      .option('--date <YYYY-MM-DD>', 'the business date', calendarDate)
      .option('--salesperson <salesperson-id>', 'one salesperson')
      .option(
        '--limit <n>',
        'at most this many (1 to 100)',
        (raw: string) => {
          if (!/^\d{1,3}$/.test(raw) || Number(raw) < 1 || Number(raw) > 100)
            throw new InvalidArgumentError('Expected a whole number from 1 to 100.');
          return Number(raw);
        },
        100,
      ),
    'print {"trips": [...]} as GET /trips shows them',
  ).action(
    async (options: {
      org: string;
      status?: string;
      date?: string;
      salesperson?: string;
      limit: number;
      json?: boolean;
      csv?: boolean;
    }) => {
      const { trips, people } = await withDatabase(async (db) => {
        const actor = operatorActor(actingOrganization(await getOrganization(db, options.org)), 'admin trip list');
        const page = await listTrips(
          db,
          actor,
          { limit: options.limit },
          { status: options.status, businessDate: options.date, salespersonId: options.salesperson },
        );
        return {
          trips: page.rows,
          people: await salespersonNames(
            db,
            options.org,
            page.rows.map((t) => t.salespersonId),
          ),
        };
      });
      printList(
        options,
        trips,
        [
          { header: 'NUMBER', value: (t) => t.number },
          { header: 'ID', value: (t) => t.id },
          { header: 'STATUS', value: (t) => t.status },
          { header: 'SOURCE', value: (t) => t.source },
          { header: 'DATE', value: (t) => t.businessDate },
          { header: 'SALESPERSON', value: (t) => label(people.get(t.salespersonId ?? ''), t.salespersonId) },
          { header: 'VAN', value: (t) => t.vanLocationId },
        ],
        { empty: 'No trip matches.', json: (rows) => ({ trips: rows }) },
      );
    },
  );

  listFormatOptions(
    trip
      .command('show')
      .description(
        "one trip: its status and dates, and the van stock per product (loaded, sold, returned, counted, difference) with the products' names",
      )
      .argument('<trip-id>', 'the trip')
      .requiredOption('--org <org-id>', 'the organisation'),
    'print {"trip", "stock"}: the trip as GET /trips/{id} and its named stock lines',
  ).action(async (tripId: string, options: { org: string; json?: boolean; csv?: boolean }) => {
    const { trip: shown, sheet, salesperson } = await namedSheet(options.org, tripId, 'admin trip show');
    if (options.json) return printJson({ trip: shown, stock: sheet.stock });
    if (!options.csv) {
      printText(
        `Trip ${shown.number} (${shown.id})`,
        ...fields([
          ['status', shown.status],
          ['source', shown.source],
          ['business date', shown.businessDate],
          ['salesperson', salesperson],
          ['route', shown.routeId ?? ''],
          ['van', shown.vanLocationId],
          ['warehouse', shown.warehouseLocationId ?? ''],
          ['departed', shown.departedAt ?? ''],
          ['returned', shown.returnedAt ?? ''],
          ['closed', shown.closedAt ?? ''],
        ]),
        '',
      );
    }
    printList(options, sheet.stock, STOCK_COLUMNS, { empty: 'Nothing loaded on the van.' });
  });

  listFormatOptions(
    trip
      .command('sheet')
      .description(
        "the trip's settlement sheet (sales, collections, credit notes, cash expected, handed in, variance, expenses) and its van stock with the products' names",
      )
      .argument('<trip-id>', 'the trip')
      .requiredOption('--org <org-id>', 'the organisation'),
    'print the sheet as GET /trips/{id}/settlement, each stock line with productCode and productName',
  ).action(async (tripId: string, options: { org: string; json?: boolean; csv?: boolean }) => {
    const { sheet, salesperson } = await namedSheet(options.org, tripId, 'admin trip sheet');
    if (options.json) return printJson(sheet);
    if (!options.csv) {
      printText(
        `Settlement of trip ${sheet.tripNumber} (${sheet.tripId}): ${sheet.status}`,
        ...fields([
          ['salesperson', salesperson],
          ['business date', sheet.businessDate],
          ['currency', sheet.currency],
          ['sales', `${sheet.sales.invoiceCount} invoice(s), ${sheet.sales.total.amount}`],
          ['sales in cash', sheet.sales.cash.amount],
          ['sales on credit', sheet.sales.credit.amount],
          ['collections', `${sheet.collections.receiptCount} receipt(s), ${sheet.collections.total.amount}`],
          ['credit notes', `${sheet.creditNotes.count}, ${sheet.creditNotes.total.amount}`],
          ['cash expected from sales', sheet.cashExpectedFromSales.amount],
          ['cash expenses', sheet.cashExpenses.amount],
          ['cash expected', sheet.cashExpected.amount],
          ['handed in', sheet.handedIn?.amount ?? ''],
          ['variance', sheet.variance?.amount ?? ''],
        ]),
        '',
      );
      if (sheet.expenses.length > 0) printText(...printableExpenses(sheet.expenses), '');
    }
    printList(options, sheet.stock, STOCK_COLUMNS, { empty: 'Nothing loaded on the van.' });
  });
}

function printableExpenses(expenses: Settlement['expenses']): string[] {
  return [
    'Expenses paid from trip cash:',
    ...expenses.map(
      (e) =>
        `  ${e.lineNumber}. ${e.kind} ${e.amount.amount} ${e.description}${e.receiptReference ? ` (receipt ${e.receiptReference})` : ''}`,
    ),
  ];
}
