// Document lifecycles as tables (server/domain/documents/transitions.ts): pure, no database.
import test from 'ava';
import { defineLifecycle, validateTransitions } from '../../server/domain/documents/transitions.js';
import { ApiError } from '../../server/platform/errors/api-error.js';

type OrderStatus = 'open' | 'invoiced' | 'cancelled';
const order = defineLifecycle<OrderStatus, 'invoice' | 'cancel', 'order.status_changed'>('order', 'open', {
  open: { invoice: { to: 'invoiced', event: 'order.status_changed' }, cancel: { to: 'cancelled', event: 'order.status_changed' } },
  invoiced: {},
  cancelled: {},
});

test('an allowed command gives the move: the status it leads to and the event it writes', (t) => {
  t.deepEqual(order.next('ord_1', 'open', 'cancel'), { to: 'cancelled', event: 'order.status_changed' });
  t.deepEqual(order.next('ord_1', 'open', 'invoice'), { to: 'invoiced', event: 'order.status_changed' });
});

test('a command not allowed from the status is 409 invalid_state naming the document, its status and where the command is allowed', (t) => {
  const error = t.throws(() => order.next('ord_1', 'cancelled', 'cancel'), { instanceOf: ApiError });
  t.is(error?.code, 'invalid_state');
  t.is(error?.status, 409);
  t.is(error?.detail, 'Order ord_1 is cancelled; cancel is allowed only from open (from cancelled: nothing, it is final).');
});

test('the commands allowed from a status are its row; a terminal status allows none', (t) => {
  t.deepEqual(order.allowedCommands('open'), ['invoice', 'cancel']);
  t.deepEqual(order.allowedCommands('invoiced'), []);
});

test('a table that moves to a status without a row is refused when it is defined', (t) => {
  const error = t.throws(() => validateTransitions<'a' | 'b', 'go', string>('thing', 'a', { a: { go: { to: 'c' as 'b', event: 'thing.moved' } }, b: {} }));
  t.regex(error!.message, /a --go--> c, which is not a status/);
});

test('a status that no move reaches from the initial one is refused when it is defined', (t) => {
  const error = t.throws(() => defineLifecycle<'draft' | 'posted' | 'lost', 'post', string>('invoice', 'draft', {
    draft: { post: { to: 'posted', event: 'invoice.posted' } }, posted: {}, lost: {},
  }));
  t.regex(error!.message, /invoice: lost cannot be reached from draft/);
});

test('an initial status without a row is refused', (t) => {
  t.throws(() => validateTransitions<'a', 'go', string>('thing', 'z' as 'a', { a: {} }), { message: /initial status z has no row/ });
});
