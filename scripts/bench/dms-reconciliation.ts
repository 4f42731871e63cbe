// The DMS daily reconciliation, measured (not asserted in a test: timed tests flake on a shared machine). On a fresh
// database: one distributor with 5 salesmen, each with a day of 500 CS invoices (stored as the push stores them,
// then flagged directly: 90 % posted, 5 % rejected, 5 % still received, so the run compares real states without
// posting 2,500 invoices first), a daily totals document and a route settlement listing the day's numbers (and two
// that never arrived). Figures: a run that computes and writes the 5 days (each one a changed result: its row, its
// event, its notification), median of `rounds` after the days' rows are deleted; and a run that checks the same days
// again unchanged (computed, nothing written but checkedAt), median of `rounds`.
import pg from 'pg';
import { kyselyOver } from '../../server/platform/database/database.js';
import { applyMigrations } from '../../server/platform/database/migrations.js';
import { inTransaction } from '../../server/platform/database/transaction.js';
import { actingOrganization, createOrganization } from '../../server/platform/access/organizations.js';
import { operatorActor } from '../../server/platform/access/actor.js';
import { locations } from '../../server/modules/locations/service.js';
import { addConnection } from '../../server/modules/dms/connections.js';
import { ingestBatch } from '../../server/modules/dms/ingest.js';
import { reconcileDue } from '../../server/modules/dms/reconciliation.js';
// The registries the DMS and the posting functions read (the DMS handlers, the postings, the document types).
import '../../server/composition/modules.js';

export interface DmsReconciliationFigures {
  salesmen: number;
  documentsPerSalesman: number;
  rounds: number;
  freshMedianMs: number;
  freshMaxMs: number;
  recheckMedianMs: number;
  recheckMaxMs: number;
}

const DAY = '2026-11-25';
const D = (documentType: string, documentNumber: string, salesmanCode: string, body: Record<string, unknown>) => ({
  documentType,
  distributorCode: 'DIST001',
  documentNumber,
  documentDate: DAY,
  salesmanCode,
  body,
});
const invoice = (route: string, salesman: string, n: number) =>
  D('sale_invoice', `CS${route}${String(n).padStart(6, '0')}`, salesman, {
    routeCode: route,
    customerCode: `UG${String(1 + (n % 20)).padStart(7, '0')}`,
    currency: 'UGX',
    payment: { method: 'credit' },
    lines: [{ productCode: '100201', unit: 'case', quantity: 1, unitPrice: '24000' }],
    totals: { subtotal: '24000', discount: '0', tax: '4320', total: '28320' },
  });

const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!;

export async function benchDmsReconciliation(
  urlOf: (database: string) => string,
  options: { salesmen?: number; documents?: number; rounds?: number } = {},
): Promise<DmsReconciliationFigures> {
  const salesmen = options.salesmen ?? 5;
  const perSalesman = options.documents ?? 500;
  const rounds = options.rounds ?? 5;
  const name = 'bench_dms_reconciliation';
  const admin = new pg.Pool({ connectionString: urlOf('postgres'), max: 1 });
  admin.on('error', () => {});
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.query(`CREATE DATABASE ${name}`);
  const pool = new pg.Pool({ connectionString: urlOf(name), max: 4 });
  pool.on('error', () => {});
  const db = kyselyOver(pool);
  try {
    await applyMigrations(pool);
    const record = await createOrganization(db, {
      name: 'Bench DMS reconciliation',
      baseCurrency: 'UGX',
      modules: ['delivery', 'field-sales'],
    });
    const operator = operatorActor(actingOrganization(record), 'bench');
    const connection = await inTransaction(db, async (tx) => {
      for (const code of ['M01', 'D01']) await locations.create(tx, operator, { code, name: code });
      return addConnection(tx, record.id, 'canonical', { distributorCode: 'DIST001', synchronous: false });
    });
    for (let s = 1; s <= salesmen; s += 1) {
      const route = `R0${s}`;
      const salesman = `SM0${s}`;
      const invoices = Array.from({ length: perSalesman }, (_, i) => invoice(route, salesman, i + 1));
      const numbers = invoices.map((d) => d.documentNumber);
      const comparison = [
        D('daily_totals', `DT-${salesman}`, salesman, {
          totals: [{ documentType: 'sale_invoice', count: perSalesman + 2, value: String(28320 * (perSalesman + 2)) }],
          documents: [...numbers, `CS${route}900001`, `CS${route}900002`],
        }),
        D('route_settlement', `RS-${salesman}`, salesman, {
          routeCode: route,
          cashHandedIn: '0',
          documents: [...numbers, `CS${route}900001`, `CS${route}900002`],
        }),
      ];
      const ids: string[] = [];
      for (let i = 0; i < invoices.length; i += 500) {
        const batch = await inTransaction(db, (tx) => ingestBatch(tx, connection, invoices.slice(i, i + 500)));
        ids.push(...batch.flags.map((flag) => flag.id));
      }
      await inTransaction(db, (tx) => ingestBatch(tx, connection, comparison));
      const posted = ids.filter((_, i) => i % 20 < 18);
      const rejected = ids.filter((_, i) => i % 20 === 18);
      const now = new Date();
      await db
        .updateTable('dms_documents')
        .set({
          state: 'posted',
          mikono_table: 'invoices',
          mikono_id: 'inv_bench',
          posted_at: now,
          updated_at: now,
          next_attempt_at: null,
        })
        .where('organization_id', '=', record.id)
        .where('id', 'in', posted)
        .execute();
      await db
        .updateTable('dms_documents')
        .set({
          state: 'rejected',
          reason_code: 'R09',
          reason_text: 'Bench: refused.',
          updated_at: now,
          next_attempt_at: null,
        })
        .where('organization_id', '=', record.id)
        .where('id', 'in', rejected)
        .execute();
    }
    const after = new Date(`${DAY}T21:00:00.000Z`);
    const fresh: number[] = [];
    const recheck: number[] = [];
    for (let r = 0; r < rounds; r += 1) {
      await db.deleteFrom('dms_reconciliations').where('organization_id', '=', record.id).execute();
      let started = performance.now();
      const changed = await reconcileDue(db, after, record.id);
      fresh.push(performance.now() - started);
      if (changed !== salesmen) throw new Error(`a fresh run changed ${changed} days, not ${salesmen}`);
      started = performance.now();
      const again = await reconcileDue(db, after, record.id);
      recheck.push(performance.now() - started);
      if (again !== 0) throw new Error(`an unchanged run changed ${again} days`);
    }
    return {
      salesmen,
      documentsPerSalesman: perSalesman,
      rounds,
      freshMedianMs: median(fresh),
      freshMaxMs: Math.max(...fresh),
      recheckMedianMs: median(recheck),
      recheckMaxMs: Math.max(...recheck),
    };
  } catch (error) {
    process.stderr.write(`dms reconciliation bench: ${(error as Error).stack ?? String(error)}\n`);
    throw error;
  } finally {
    await pool.end();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
    await admin.end();
  }
}

export function dmsReconciliationReport(f: DmsReconciliationFigures): string[] {
  return [
    `DMS daily reconciliation: a day of ${f.salesmen} salesmen x ${f.documentsPerSalesman} documents reconciled and written in ${f.freshMedianMs.toFixed(0)} ms (median of ${f.rounds}; worst ${f.freshMaxMs.toFixed(0)} ms), ` +
      `${(f.freshMedianMs / f.salesmen).toFixed(0)} ms a salesman's day`,
    `  checked again unchanged (nothing written but checkedAt): ${f.recheckMedianMs.toFixed(0)} ms (median of ${f.rounds}; worst ${f.recheckMaxMs.toFixed(0)} ms)`,
  ];
}
