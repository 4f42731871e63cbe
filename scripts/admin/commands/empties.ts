// empties receive | return: empties (crates, returnable bottles) received from or returned to the supplier, at a
// warehouse. Each is one inventory document (ERC- or ERT-) posted through the stock module's posting function, as a
// REST route would: its stock movements, its empties movements and its stock.movement.created event, or nothing.
import type { Command } from 'commander';
import { actingOrganization, getOrganization } from '../../../server/platform/access/organizations.js';
import { operatorActor } from '../../../server/platform/access/actor.js';
import { inTransaction } from '../../../server/platform/database/transaction.js';
import {
  receiveEmptiesFromSupplier,
  returnEmptiesToSupplier,
  type SupplierEmptiesCommand,
} from '../../../server/modules/stock/empties.js';
import type { StockDocument } from '../../../server/modules/stock/documents.js';
import { withDatabase } from '../database.js';
import { UsageError } from '../errors.js';
import { printJson, printText, table } from '../output.js';

type Line = SupplierEmptiesCommand['lines'][number];

/** `PRODUCT_ID:PIECES` or, for a receipt, `PRODUCT_ID:PIECES:COST_PER_PIECE`. */
function parseLine(raw: string, previous: Line[] = []): Line[] {
  const [productId, quantity, unitCost, ...rest] = raw.split(':');
  if (
    !productId ||
    !quantity ||
    rest.length > 0 ||
    !/^[1-9][0-9]{0,8}$/.test(quantity) ||
    (unitCost !== undefined && !/^(0|[1-9][0-9]{0,13})(\.[0-9]{1,6})?$/.test(unitCost))
  ) {
    throw new UsageError(
      `--line ${raw}: expected PRODUCT_ID:PIECES or PRODUCT_ID:PIECES:COST_PER_PIECE (pieces a whole number from 1, cost a decimal)`,
    );
  }
  return [...previous, { productId, quantity: Number(quantity), ...(unitCost === undefined ? {} : { unitCost }) }];
}

export function registerEmptiesCommands(program: Command): void {
  const empties = program
    .command('empties')
    .description(
      'empties received from or returned to the supplier (one document each, with its stock and empties movements)',
    );
  const post = (name: string, description: string, postWith: typeof receiveEmptiesFromSupplier, costs: boolean) =>
    empties
      .command(name)
      .description(description)
      .requiredOption('--org <id>', 'organisation id')
      .requiredOption('--location <id>', 'the warehouse (location id)')
      .requiredOption(
        '--line <product:pieces>',
        costs ? 'PRODUCT_ID:PIECES[:COST_PER_PIECE], repeatable' : 'PRODUCT_ID:PIECES, repeatable',
        parseLine,
      )
      .option('--note <text>', 'a note on the document')
      .option('--json', 'print the document as JSON')
      .action(async (options: { org: string; location: string; line: Line[]; note?: string; json?: boolean }) => {
        if (!costs && options.line.some((line) => line.unitCost !== undefined))
          throw new UsageError('a return moves at the moving average cost: give PRODUCT_ID:PIECES without a cost');
        const document = await withDatabase(async (db) => {
          const actor = operatorActor(
            actingOrganization(await getOrganization(db, options.org)),
            `admin empties ${name}`,
          );
          return inTransaction(db, (tx) =>
            postWith(tx, actor, { locationId: options.location, note: options.note ?? null, lines: options.line }),
          );
        });
        print(document, options.json);
      });
  post('receive', 'record empties received from the supplier into a warehouse', receiveEmptiesFromSupplier, true);
  post(
    'return',
    'record empties returned to the supplier from a warehouse (refused when the warehouse holds fewer)',
    returnEmptiesToSupplier,
    false,
  );
}

function print(document: StockDocument, json = false): void {
  if (json) {
    printJson({
      id: document.id,
      number: document.number,
      type: document.type,
      note: document.note,
      movements: document.movements.map((m) => ({
        lineNumber: m.line,
        productId: m.productId,
        fromLocationId: m.fromLocationId,
        toLocationId: m.toLocationId,
        quantity: m.quantity,
      })),
      createdAt: document.createdAt.toISOString(),
    });
    return;
  }
  printText(
    `${document.number} (${document.id})`,
    ...table(
      ['LINE', 'PRODUCT', 'PIECES'],
      document.movements.map((m) => [String(m.line), m.productId, String(m.quantity)]),
    ),
  );
}
