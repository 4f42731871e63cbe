// The fixed steps of the pipeline as one middleware. Each step mounted with `use` is a layer of express's router, and
// the router pays for every layer on every request whether the step does anything or not (its `next` loop, the path
// match, the prefix trimming, the promise check): on `GET /health` the router and express took about twice bare
// express's CPU per request (decision 0056). Run in sequence here, each step still runs in the same order with the
// same `next` contract; only the router's bookkeeping between them is gone.
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * One middleware that runs `steps` in order, as express's router would run them mounted one by one without a path:
 * a step calls `next()` to go on, or `next(error)` (or throws, or returns a promise that rejects) to hand the error to
 * the router's error handlers, skipping the steps after it. Per-step tracing through diagnostics_channel, which the
 * router offers per layer, is the sequence's as one layer.
 */
export function inSequence(...given: (RequestHandler | RequestHandler[])[]): RequestHandler {
  const steps = given.flat();
  // An error handler (four parameters) is skipped by the router on the way in; it has no place in a sequence.
  if (steps.some((step) => step.length > 3)) throw new Error('inSequence takes request handlers, not error handlers');
  return (req: Request, res: Response, done: NextFunction) => {
    let index = 0;
    const next = (error?: unknown): void => {
      // As the router's `next`: 'route' goes on, 'router' leaves the router, any other truthy value is an error.
      if (error && error !== 'route') {
        done(error);
        return;
      }
      const step = steps[index++];
      if (step === undefined) {
        done();
        return;
      }
      // As express's router runs a layer (router/lib/layer.js handleRequest): what a step throws, or the rejection of
      // the promise (any thenable) it returns, is its error.
      try {
        const result = step(req, res, next) as unknown;
        if (
          result !== null &&
          typeof result === 'object' &&
          typeof (result as PromiseLike<unknown>).then === 'function'
        )
          (result as PromiseLike<unknown>).then(undefined, (failure: unknown) =>
            next(failure || new Error('Rejected promise')),
          );
      } catch (failure) {
        next(failure);
      }
    };
    next();
  };
}
