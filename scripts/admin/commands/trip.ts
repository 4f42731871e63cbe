// trip open | load | depart | return | settle | close | gps: an operator moves a delivery trip through the trips
// module's posting functions (the same ones the sandbox and, later, the DMS call), and settles it through the
// settlements module's (settle: the cash handed in and the expenses paid from trip cash; it closes the settlement and
// the trip; close: a trip with nothing to settle, closed with a settlement of zero), each command one transaction. Option values
// are checked before the database is opened (exit 2, nothing changed); a rule that refuses the move is exit 1 with
// its reason. --json prints the trip as GET /trips/{id} returns it.
import { InvalidArgumentError, type Command } from 'commander';
import { operatorActor } from '../../../server/platform/access/actor.js';
import { actingOrganization, getOrganization } from '../../../server/platform/access/organizations.js';
import { inTransaction, type Tx } from '../../../server/platform/database/transaction.js';
import type { StockUnit } from '../../../server/modules/stock/documents.js';
import {
  departTrip,
  loadTrip,
  MAX_POINTS,
  openTrip,
  recordTripLocations,
  returnTrip,
  type TripPoint,
} from '../../../server/modules/trips/documents.js';
import { getTrip } from '../../../server/modules/trips/service.js';
import type { Trip } from '../../../server/modules/trips/representation.js';
import {
  closeTripWithNothingToSettle,
  EXPENSE_KINDS,
  settleTrip,
  type SettlementExpense,
} from '../../../server/modules/settlements/documents.js';
import type { Actor } from '../../../server/platform/access/actor.js';
import { withDatabase } from '../database.js';
import { commaList } from '../options.js';
import { fields, printJson, printText } from '../output.js';
import { registerTripSheetCommands } from './trip-sheets.js';

const UNITS: readonly StockUnit[] = ['case', 'bottle', 'piece'];

/** `prd_x:5,prd_y:12:bottle` -> lines of product, whole quantity and unit (case when left out). */
function parseLines(minimum: number): (raw: string) => { productId: string; quantity: number; unit: StockUnit }[] {
  return (raw) =>
    commaList(raw).map((part) => {
      const [productId, quantity, unit = 'case', ...rest] = part.split(':');
      if (
        !productId ||
        quantity === undefined ||
        rest.length > 0 ||
        !/^\d{1,9}$/.test(quantity) ||
        Number(quantity) < minimum
      ) {
        throw new InvalidArgumentError(
          `${part} is not PRODUCT_ID:QUANTITY[:UNIT] with a whole QUANTITY of at least ${minimum}.`,
        );
      }
      if (!(UNITS as readonly string[]).includes(unit))
        throw new InvalidArgumentError(`${part}: the unit is one of ${UNITS.join(', ')}.`);
      return { productId, quantity: Number(quantity), unit: unit as StockUnit };
    });
}

function parseDate(raw: string): string {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(raw) || new Date(`${raw}T00:00:00Z`).toISOString().slice(0, 10) !== raw) {
    throw new InvalidArgumentError('Expected a calendar date YYYY-MM-DD.');
  }
  return raw;
}

/** A decimal amount, 0 or more (its currency's decimals are checked by the settlement). */
function parseAmount(raw: string): string {
  if (!/^\d{1,14}(\.\d{1,4})?$/.test(raw))
    throw new InvalidArgumentError('Expected an amount such as 301500 or 18.50 (not negative).');
  return raw;
}

/**
 * `kind:amount:description[:receipt]`, repeatable. The kind and description are checked by the settlement (a fuel
 * expense or a purchase without its receipt is refused there, naming it); here only the shape.
 */
function collectExpense(raw: string, previous: SettlementExpense[]): SettlementExpense[] {
  const [kind, amount, description, receipt, ...rest] = raw.split(':');
  if (!kind || amount === undefined || !description || rest.length > 0) {
    throw new InvalidArgumentError(
      `${raw} is not KIND:AMOUNT:DESCRIPTION[:RECEIPT] (kind ${EXPENSE_KINDS.join(' or ')}; no ':' inside the description).`,
    );
  }
  if (!/^\d{1,14}(\.\d{1,4})?$/.test(amount))
    throw new InvalidArgumentError(`${raw}: the amount is a decimal such as 15000 (not negative).`);
  return [
    ...previous,
    { kind, amount, description, receiptReference: receipt === undefined || receipt === '' ? null : receipt },
  ];
}

/** A JSON array of {recordedAt, latitude, longitude, accuracyMeters?}. */
function parsePoints(raw: string): TripPoint[] {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new InvalidArgumentError(
      'Expected a JSON array such as [{"recordedAt":"2026-11-23T08:00:00Z","latitude":0.3136,"longitude":32.5811,"accuracyMeters":12}].',
    );
  }
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_POINTS)
    throw new InvalidArgumentError(`Expected a JSON array of 1 to ${MAX_POINTS} points.`);
  return value as TripPoint[];
}

/** Runs the move as an operator of the organisation, in one transaction, and prints the trip. */
async function run(
  org: string,
  name: string,
  json: boolean | undefined,
  work: (tx: Tx, actor: Actor) => Promise<Trip>,
): Promise<void> {
  const trip = await withDatabase(async (db) => {
    const actor = operatorActor(actingOrganization(await getOrganization(db, org)), `admin trip ${name}`);
    return inTransaction(db, (tx) => work(tx, actor));
  });
  if (json) printJson(trip);
  else {
    printText(
      `Trip ${trip.number} (${trip.id})`,
      ...fields([
        ['status', trip.status],
        ['business date', trip.businessDate],
        ['van', trip.vanLocationId],
        ['warehouse', trip.warehouseLocationId],
        ['route', trip.routeId],
        ['salesperson', trip.salespersonId],
      ]),
    );
  }
}

export function registerTripCommands(program: Command): void {
  const trip = program
    .command('trip')
    .description(
      'delivery trips: list, show and the settlement sheet; open, load, depart, return (count), settle, close, record the GPS trail',
    );
  registerTripSheetCommands(trip);

  trip
    .command('open')
    .description(
      "open a trip for a van (status loading); the route and salesperson default to the van's route and its salesperson",
    )
    .requiredOption('--org <org-id>', 'the organisation')
    .requiredOption('--van <location-id>', "the van's good-stock location (V_<route>-G)")
    .requiredOption('--warehouse <location-id>', 'the main warehouse it loads from and returns to')
    .requiredOption('--date <YYYY-MM-DD>', 'the business date', parseDate)
    .option('--route <route-id>', "the route (default: the van's)")
    .option('--salesperson <salesperson-id>', "the salesperson (default: the route's)")
    .option('--json', 'print the trip as JSON')
    .action(
      async (options: {
        org: string;
        van: string;
        warehouse: string;
        date: string;
        route?: string;
        salesperson?: string;
        json?: boolean;
      }) => {
        await run(options.org, 'open', options.json, (tx, actor) =>
          openTrip(tx, actor, {
            vanLocationId: options.van,
            warehouseLocationId: options.warehouse,
            businessDate: options.date,
            ...(options.route === undefined ? {} : { routeId: options.route }),
            ...(options.salesperson === undefined ? {} : { salespersonId: options.salesperson }),
          }),
        );
      },
    );

  trip
    .command('load')
    .description("transfer stock from the trip's warehouse to its van (only while loading)")
    .argument('<trip-id>', 'the trip')
    .requiredOption('--org <org-id>', 'the organisation')
    .requiredOption(
      '--lines <list>',
      'PRODUCT_ID:QUANTITY[:UNIT],... (unit case, bottle or piece; default case)',
      parseLines(1),
    )
    .option('--json', 'print the trip as JSON')
    .action(
      async (
        tripId: string,
        options: { org: string; lines: { productId: string; quantity: number; unit: StockUnit }[]; json?: boolean },
      ) => {
        await run(
          options.org,
          'load',
          options.json,
          async (tx, actor) => (await loadTrip(tx, actor, { tripId, lines: options.lines })).trip,
        );
      },
    );

  trip
    .command('depart')
    .description('the van leaves (status in_transit)')
    .argument('<trip-id>', 'the trip')
    .requiredOption('--org <org-id>', 'the organisation')
    .option('--json', 'print the trip as JSON')
    .action(async (tripId: string, options: { org: string; json?: boolean }) => {
      await run(options.org, 'depart', options.json, (tx, actor) => departTrip(tx, actor, tripId));
    });

  trip
    .command('return')
    .description(
      'the van is back: post its count (the difference from the books as a TRIP_COUNT adjustment) and move what was counted back to the warehouse (status returned)',
    )
    .argument('<trip-id>', 'the trip')
    .requiredOption('--org <org-id>', 'the organisation')
    .requiredOption(
      '--count <list>',
      'PRODUCT_ID:COUNTED[:UNIT],... for every product the van holds (0 when none was found; "" when the van is empty)',
      parseLines(0),
    )
    .option('--json', 'print the trip as JSON')
    .action(
      async (
        tripId: string,
        options: { org: string; count: { productId: string; quantity: number; unit: StockUnit }[]; json?: boolean },
      ) => {
        await run(
          options.org,
          'return',
          options.json,
          async (tx, actor) =>
            (
              await returnTrip(tx, actor, {
                tripId,
                lines: options.count.map((line) => ({
                  productId: line.productId,
                  unit: line.unit,
                  countedQuantity: line.quantity,
                })),
              })
            ).trip,
        );
      },
    );

  trip
    .command('settle')
    .description(
      'close the settlement of a returned trip with the cash handed in and the expenses paid from trip cash (crew allowances, receipted purchases; never fuel); closes the trip too (sends settlement.closed and trip.closed)',
    )
    .requiredOption('--org <org-id>', 'the organisation')
    .requiredOption('--trip <trip-id>', 'the trip (returned)')
    .requiredOption(
      '--handed-in <amount>',
      'the cash handed in, in the base currency (a decimal such as 301500)',
      parseAmount,
    )
    .option(
      '--expense <kind:amount:description[:receipt]>',
      `an expense paid from trip cash, repeatable (kind ${EXPENSE_KINDS.join(' or ')}; a purchase names its receipt)`,
      collectExpense,
      [] as SettlementExpense[],
    )
    .option('--notes <text>', 'a note kept with the settlement')
    .option('--json', 'print the settlement sheet as JSON')
    .action(
      async (options: {
        org: string;
        trip: string;
        handedIn: string;
        expense: SettlementExpense[];
        notes?: string;
        json?: boolean;
      }) => {
        const sheet = await withDatabase(async (db) => {
          const actor = operatorActor(actingOrganization(await getOrganization(db, options.org)), 'admin trip settle');
          return inTransaction(db, (tx) =>
            settleTrip(tx, actor, {
              tripId: options.trip,
              handedIn: options.handedIn,
              expenses: options.expense,
              notes: options.notes ?? null,
            }),
          );
        });
        if (options.json) printJson(sheet);
        else {
          printText(
            `Settlement ${sheet.id} of trip ${sheet.tripNumber} (${sheet.tripId}): closed; the trip is ${sheet.tripStatus}`,
            ...fields([
              ['cash expected from sales', sheet.cashExpectedFromSales.amount],
              ['cash expenses', sheet.cashExpenses.amount],
              ['cash expected', sheet.cashExpected.amount],
              ['handed in', sheet.handedIn?.amount ?? ''],
              ['variance', sheet.variance?.amount ?? ''],
              ['currency', sheet.currency],
            ]),
          );
        }
      },
    );

  trip
    .command('close')
    .description(
      'close a returned trip with nothing sold, collected or credited on it (its settlement closed at zero; sends settlement.closed and trip.closed); a trip with money on it is settled with trip settle',
    )
    .argument('<trip-id>', 'the trip')
    .requiredOption('--org <org-id>', 'the organisation')
    .option('--json', 'print the trip as JSON')
    .action(async (tripId: string, options: { org: string; json?: boolean }) => {
      await run(options.org, 'close', options.json, async (tx, actor) => {
        await closeTripWithNothingToSettle(tx, actor, tripId);
        return getTrip(tx, actor, tripId);
      });
    });

  trip
    .command('gps')
    .description("append GPS fixes to the trip's trail (refused once it is closed)")
    .argument('<trip-id>', 'the trip')
    .requiredOption('--org <org-id>', 'the organisation')
    .requiredOption(
      '--points <json>',
      `a JSON array of 1 to ${MAX_POINTS} {"recordedAt","latitude","longitude","accuracyMeters"?}`,
      parsePoints,
    )
    .option('--json', 'print the trip as JSON')
    .action(async (tripId: string, options: { org: string; points: TripPoint[]; json?: boolean }) => {
      await run(options.org, 'gps', options.json, async (tx, actor) => {
        await recordTripLocations(tx, actor, tripId, options.points);
        return getTrip(tx, actor, tripId);
      });
    });
}
