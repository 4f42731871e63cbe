// The pipeline's fixed steps run as one middleware (server/platform/http/in-sequence.ts, decision 0056) with the
// contract express's router gives layers: in order; an error given to next, thrown, or a rejected promise skips the
// steps after it and reaches the router's error handling; 'route' goes on, 'router' is handed on.
import test from 'ava';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { inSequence } from '../../server/platform/http/in-sequence.js';

/** Runs the sequence on a blank request; resolves with what reached the router's next and the steps that ran. */
function run(steps: RequestHandler[]): Promise<{ passed: unknown[]; ran: string[] }> {
  const ran: string[] = [];
  const req = { ran } as unknown as Request;
  return new Promise((resolve) => {
    inSequence(...steps)(req, {} as Response, ((...passed: unknown[]) => resolve({ passed, ran })) as NextFunction);
  });
}
const step =
  (name: string, then: (next: NextFunction) => unknown = (next) => next()): RequestHandler =>
  (req, _res, next) => {
    (req as unknown as { ran: string[] }).ran.push(name);
    return then(next) as undefined;
  };

test('the steps run in order, each after the one before calls next, and the router is told to go on', async (t) => {
  const late = step('b', (next) => setImmediate(next));
  t.deepEqual(await run([step('a'), late, step('c')]), { passed: [], ran: ['a', 'b', 'c'] });
});

test('an error given to next, thrown, or a rejected promise ends the sequence there and reaches the router', async (t) => {
  const failure = new Error('refused');
  const given = await run([step('a', (next) => next(failure)), step('b')]);
  t.deepEqual(given, { passed: [failure], ran: ['a'] });
  const thrown = await run([
    step('a', () => {
      throw failure;
    }),
    step('b'),
  ]);
  t.deepEqual(thrown, { passed: [failure], ran: ['a'] });
  const rejected = await run([step('a', () => Promise.reject(failure)), step('b')]);
  t.deepEqual(rejected, { passed: [failure], ran: ['a'] });
  const empty = await run([step('a', () => Promise.reject(undefined)), step('b')]);
  t.is((empty.passed[0] as Error).message, 'Rejected promise', 'as the router names a rejection without a reason');
});

test("an async step that resolves goes on only by calling next; 'route' goes on and 'router' is handed on", async (t) => {
  t.deepEqual(await run([step('a', async (next) => next()), step('b')]), { passed: [], ran: ['a', 'b'] });
  t.deepEqual(await run([step('a', (next) => next('route')), step('b')]), { passed: [], ran: ['a', 'b'] });
  t.deepEqual(await run([step('a', (next) => next('router')), step('b')]), { passed: ['router'], ran: ['a'] });
});

test('arrays of steps are flattened, and an error handler is refused', (t) => {
  t.notThrows(() => inSequence([step('a'), step('b')], step('c')));
  const errorHandler = (_error: unknown, _req: Request, _res: Response, next: NextFunction) => next();
  t.throws(() => inSequence(errorHandler as unknown as RequestHandler), {
    message: /not error handlers/,
  });
});
