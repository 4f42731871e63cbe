// Side effects outside the database happen after commit: an outbound send made inside a transaction is refused (a
// deadlock retry would repeat it, a rollback could not take it back), and afterCommit runs an effect once, only
// when the transaction commits.
import test from 'ava';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterCommit, inTransaction } from '../../server/platform/database/transaction.js';
import { postJson } from '../../server/platform/webhooks/send.js';
import { domainWorld, type DomainWorld } from '../support/domain.js';

let world: DomainWorld;
const received: string[] = [];
const receiver = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk) => {
    body += chunk;
  });
  req.on('end', () => {
    received.push(body);
    res.writeHead(204).end();
  });
});
test.before(async () => {
  world = await domainWorld('outside_transaction');
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
});
test.after.always(async () => {
  await world?.close();
  await new Promise((resolve) => receiver.close(resolve));
});

const destination = () => ({
  url: new URL(`http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`),
  address: '127.0.0.1',
  family: 4 as const,
});

test.serial('a webhook send inside a transaction is refused, and the transaction rolls back whole', async (t) => {
  const { organization } = await world.organization();
  const error = await t.throwsAsync(
    inTransaction(world.db, async (tx) => {
      await tx
        .insertInto('notifications')
        .values({
          organization_id: organization.id,
          id: 'ntf_inside',
          kind: 'test',
          message: 'written before the send',
        })
        .execute();
      await postJson(destination(), '{"inside":true}', {}, 2_000);
    }),
  );
  t.regex(error!.message, /a webhook delivery inside a database transaction/);
  t.deepEqual(received, [], 'nothing was sent');
  const written = await world.db
    .selectFrom('notifications')
    .select('id')
    .where('organization_id', '=', organization.id)
    .execute();
  t.deepEqual(written, [], 'the row written before the send was rolled back');
});

test.serial('the same send outside a transaction goes out', async (t) => {
  const outcome = await postJson(destination(), '{"outside":true}', {}, 2_000);
  t.true(outcome.ok);
  t.deepEqual(received, ['{"outside":true}']);
});

test.serial(
  'afterCommit runs its effect once after the commit, and never when the transaction rolls back',
  async (t) => {
    const effects: string[] = [];
    const result = await inTransaction(world.db, async (tx) => {
      afterCommit(tx, () => {
        effects.push('committed');
      });
      t.deepEqual(effects, [], 'not before the commit');
      return 'done';
    });
    t.is(result, 'done');
    t.deepEqual(effects, ['committed']);

    await t.throwsAsync(
      inTransaction(world.db, async (tx) => {
        afterCommit(tx, () => {
          effects.push('rolled back');
        });
        throw new Error('refused');
      }),
    );
    t.deepEqual(effects, ['committed']);
  },
);

test.serial('a transaction cannot be opened inside another: one transaction owner per operation', async (t) => {
  const error = await t.throwsAsync(inTransaction(world.db, () => inTransaction(world.db, async () => 'nested')));
  t.regex(error!.message, /inTransaction inside a transaction/);
});

test.serial('a query on a transaction after it ended fails instead of running outside it', async (t) => {
  let leaked: Parameters<Parameters<typeof inTransaction>[1]>[0] | undefined;
  await inTransaction(world.db, async (tx) => {
    leaked = tx;
  });
  const error = await t.throwsAsync(leaked!.selectFrom('organizations').select('id').execute());
  t.regex(error!.message, /transaction that has already ended/);
});
