// The sandbox's stock after its opening: what a few weeks of a warehouse's work leave in the ledgers, posted through
// the stock module's own functions (each document with its movements, levels, costs and event). Empties received
// from and returned to the supplier, transfers between the warehouses and to the damages store, a damage write-off,
// and the empties some outlets already held when the books were opened. Deterministic: every quantity follows from
// the record's place in the synthetic data. All of it is posted in the bootstrap's transaction, so the documents
// carry the bootstrap's time; trips add the dated history.
import type { Actor } from '../../platform/access/actor.js';
import type { Tx } from '../../platform/database/transaction.js';
import { postStockAdjustment, postStockTransfer } from '../stock/documents.js';
import { adjustCustomerEmpties, receiveEmptiesFromSupplier, returnEmptiesToSupplier } from '../stock/empties.js';
import type { SandboxDistributor } from './synthetic-distributor.js';

/** How many outlets open with empties on their account (the first ones of the synthetic list). */
const OUTLETS_HOLDING_EMPTIES = 24;

export async function writeStockHistory(
  tx: Tx,
  actor: Actor,
  d: SandboxDistributor,
  idOf: Map<string, string>,
): Promise<void> {
  const location = (code: string) => {
    const found = d.locations.find((l) => l.code === code);
    return found ? idOf.get(found.id) : undefined;
  };
  const [kampala, jinja, damages] = [location('M01'), location('M02'), location('D01')];
  if (!kampala || !jinja) return;
  const empties = d.products
    .filter((p) => p.is_empty && p.tracks_stock)
    .map((p) => ({ id: idOf.get(p.id)!, deposit: p.deposit_amount }));
  const beverages = d.products.filter((p) => !p.is_empty && p.tracks_stock).map((p) => idOf.get(p.id)!);

  // Empties from the supplier (three deliveries into Kampala, one into Jinja), and one load of damaged crates sent back.
  for (const [i, warehouse] of [kampala, kampala, jinja, kampala].entries()) {
    await receiveEmptiesFromSupplier(tx, actor, {
      locationId: warehouse,
      note: `Empties delivery ${i + 1} from the brewery`,
      lines: empties.map((e, j) => ({
        productId: e.id,
        quantity: 200 + ((i * 97 + j * 41) % 400),
        ...(e.deposit ? { unitCost: e.deposit } : {}),
      })),
    });
  }
  if (empties.length > 0) {
    await returnEmptiesToSupplier(tx, actor, {
      locationId: kampala,
      note: 'Broken crates returned to the brewery',
      lines: [{ productId: empties[0]!.id, quantity: 60 }],
    });
  }

  // Stock balanced between the warehouses, a few cases of each of the first beverages at a time.
  for (let week = 0; week < 3; week += 1) {
    const lines = beverages
      .slice(week * 4, week * 4 + 6)
      .map((productId, j) => ({ productId, unit: 'case' as const, quantity: 5 + ((week * 7 + j * 3) % 12) }));
    if (lines.length > 0)
      await postStockTransfer(tx, actor, {
        fromLocationId: week % 2 === 0 ? kampala : jinja,
        toLocationId: week % 2 === 0 ? jinja : kampala,
        note: `Weekly balancing, week ${week + 1}`,
        lines,
      });
  }

  // Breakage found at Kampala: to the damages store, then written off.
  if (damages && beverages.length >= 2) {
    const broken = beverages
      .slice(0, 2)
      .map((productId, j) => ({ productId, unit: 'bottle' as const, quantity: 6 + j * 6 }));
    await postStockTransfer(tx, actor, {
      fromLocationId: kampala,
      toLocationId: damages,
      note: 'Breakage found at the count',
      lines: broken,
    });
    await postStockAdjustment(tx, actor, {
      reasonCode: 'DMG',
      note: 'Breakage written off',
      lines: broken.map((line) => ({ ...line, locationId: damages, quantity: -line.quantity })),
    });
  }

  // Empties outlets held when the books were opened, per outlet one document.
  if (empties.length > 0) {
    for (const [i, outlet] of d.outlets.slice(0, OUTLETS_HOLDING_EMPTIES).entries()) {
      await adjustCustomerEmpties(tx, actor, {
        customerId: idOf.get(outlet.id)!,
        reasonCode: 'OPENING',
        note: 'Empties held at opening',
        lines: [{ productId: empties[i % empties.length]!.id, quantity: 2 + ((i * 13) % 30) }],
      });
    }
  }
}
