// field visit | activity | observation: records field activity for an organisation, through the field-activity
// module's posting functions (the same rules as every other caller: the organisation's own records, a visit at
// its outlet, a PNG or JPEG photo of at most 2 MB). The ERP field app is not part of this service; this is how an
// operator (or a script) records what it reports until the DMS sends it.
import { InvalidArgumentError, type Command } from 'commander';
import { readFileSync } from 'node:fs';
import { operatorActor } from '../../../server/platform/access/actor.js';
import { recordActivity, recordObservation, recordVisit } from '../../../server/modules/field-activity/service.js';
import { actingOrganization, getOrganization } from '../../../server/platform/access/organizations.js';
import type { Db, Tx } from '../../../server/platform/database/transaction.js';
import { inTransaction } from '../../../server/platform/database/transaction.js';
import { withDatabase } from '../database.js';
import { UsageError } from '../errors.js';
import { fields, printJson, printText } from '../output.js';

function wholeNumber(raw: string): number {
  if (!/^\d{1,7}$/.test(raw.trim())) throw new InvalidArgumentError('Expected a whole number from 0 to 1000000.');
  return Number(raw.trim());
}

/** Runs a posting function as the organisation's operator, in one transaction. */
async function asOperator<T>(
  org: string,
  post: (tx: Tx, actor: ReturnType<typeof operatorActor>) => Promise<T>,
): Promise<T> {
  return withDatabase(async (db: Db) => {
    const actor = operatorActor(actingOrganization(await getOrganization(db, org)), 'admin CLI');
    return inTransaction(db, (tx) => post(tx, actor));
  });
}

export function registerFieldCommands(program: Command): void {
  const field = program
    .command('field')
    .description('record field activity (visits, outlet activities, competitor observations)');

  field
    .command('visit')
    .description("record a salesperson's visit to an outlet")
    .requiredOption('--org <org-id>', 'the organisation')
    .requiredOption('--customer <customer-id>', 'the outlet visited')
    .requiredOption('--salesperson <salesperson-id>', 'who visited')
    .requiredOption('--check-in <timestamp>', 'ISO 8601 with an offset, e.g. 2026-11-20T07:42:00Z')
    .option('--check-out <timestamp>', 'ISO 8601 with an offset')
    .requiredOption('--outcome <outcome>', 'sale, no_sale or closed_outlet')
    .option('--reason <text>', 'why there was no sale')
    .option('--trip <trip-id>', 'the delivery trip it was made on')
    .option('--date <YYYY-MM-DD>', "the visit's day (default: the check-in's UTC day)")
    .option('--json', 'print the visit as GET /visits shows it')
    .action(
      async (o: {
        org: string;
        customer: string;
        salesperson: string;
        checkIn: string;
        checkOut?: string;
        outcome: string;
        reason?: string;
        trip?: string;
        date?: string;
        json?: boolean;
      }) => {
        const visit = await asOperator(o.org, (tx, actor) =>
          recordVisit(tx, actor, {
            customerId: o.customer,
            salespersonId: o.salesperson,
            checkInAt: o.checkIn,
            checkOutAt: o.checkOut,
            outcome: o.outcome,
            noSaleReason: o.reason,
            tripId: o.trip,
            visitDate: o.date,
          }),
        );
        if (o.json) printJson(visit);
        else
          printText(
            `Visit ${visit.id} recorded.`,
            ...fields([
              ['customer', visit.customerId],
              ['date', visit.visitDate],
              ['outcome', visit.outcome],
            ]),
          );
      },
    );

  field
    .command('activity')
    .description('record an outlet activity, on a visit or not')
    .requiredOption('--org <org-id>', 'the organisation')
    .requiredOption('--customer <customer-id>', 'the outlet')
    .requiredOption('--salesperson <salesperson-id>', 'who did it')
    .requiredOption('--kind <kind>', 'merchandising, cooler_check, promotion, survey or other')
    .option('--visit <visit-id>', 'the visit it was done on (at the same outlet)')
    .option('--description <text>', 'what was done (at most 500 characters)')
    .option('--date <YYYY-MM-DD>', "the day (default: the visit's, or today)")
    .option('--json', 'print the activity as GET /outlet-activities shows it')
    .action(
      async (o: {
        org: string;
        customer: string;
        salesperson: string;
        kind: string;
        visit?: string;
        description?: string;
        date?: string;
        json?: boolean;
      }) => {
        const activity = await asOperator(o.org, (tx, actor) =>
          recordActivity(tx, actor, {
            customerId: o.customer,
            salespersonId: o.salesperson,
            kind: o.kind,
            visitId: o.visit,
            description: o.description,
            performedOn: o.date,
          }),
        );
        if (o.json) printJson(activity);
        else
          printText(
            `Outlet activity ${activity.id} recorded.`,
            ...fields([
              ['customer', activity.customerId],
              ['kind', activity.kind],
              ['date', activity.performedOn],
            ]),
          );
      },
    );

  field
    .command('observation')
    .description('record a competitor observation made on a visit, with an optional photo')
    .requiredOption('--org <org-id>', 'the organisation')
    .requiredOption('--visit <visit-id>', 'the visit it was made on')
    .requiredOption('--customer <customer-id>', "the site (the visit's outlet)")
    .requiredOption('--observer <salesperson-id>', 'who observed')
    .requiredOption('--brand <brand>', 'the brand seen (at most 100 characters)')
    .requiredOption('--quantity <n>', 'bag count', wholeNumber)
    .option('--own-brand', "the brand is the distributor's own")
    .option('--date <YYYY-MM-DD>', "the day observed (default: the visit's)")
    .option('--photo <file>', 'a PNG or JPEG of at most 2 MB')
    .option('--json', 'print {"observation": ..., "photoId": ...}')
    .action(
      async (o: {
        org: string;
        visit: string;
        customer: string;
        observer: string;
        brand: string;
        quantity: number;
        ownBrand?: boolean;
        date?: string;
        photo?: string;
        json?: boolean;
      }) => {
        let photo: Buffer | undefined;
        if (o.photo !== undefined) {
          try {
            photo = readFileSync(o.photo);
          } catch (error) {
            throw new UsageError(`Cannot read --photo ${o.photo}: ${(error as Error).message}`);
          }
        }
        const recorded = await asOperator(o.org, (tx, actor) =>
          recordObservation(tx, actor, {
            visitId: o.visit,
            customerId: o.customer,
            observedBy: o.observer,
            brand: o.brand,
            isOwnBrand: o.ownBrand === true,
            quantity: o.quantity,
            observedAt: o.date,
            photo,
          }),
        );
        if (o.json) printJson(recorded);
        else
          printText(
            `Competitor observation ${recorded.observation.id} recorded.`,
            ...fields([
              ['brand', recorded.observation.brand],
              ['quantity', String(recorded.observation.quantity)],
              ['photo', recorded.photoId ?? 'none'],
            ]),
          );
      },
    );
}
