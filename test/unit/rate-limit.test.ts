// Rate-limit answers, pure (no database): the default budgets of the spec, the RateLimit-* headers of a bucket's
// state and the value of Retry-After, the whole seconds until the bucket holds one token again (at least 1).
import test from 'ava';
import { DEFAULT_RATE_LIMITS, rateDecision } from '../../server/platform/access/rate-limit.js';

test('the default budgets: read 600 a minute burst 100, write 120 burst 30, ingest 60 burst 60', (t) => {
  t.deepEqual(DEFAULT_RATE_LIMITS, {
    read: { perMinute: 600, burst: 100 },
    write: { perMinute: 120, burst: 30 },
    ingest: { perMinute: 60, burst: 60 },
  });
});

test('an allowed request: Retry-After 0 (not sent), RateLimit-Limit the burst, -Remaining the whole tokens left, -Reset the whole seconds to a full bucket', (t) => {
  t.deepEqual(rateDecision({ perMinute: 600, burst: 100 }, true, 99), {
    allowed: true,
    retryAfterSeconds: 0,
    headers: { 'RateLimit-Limit': '100', 'RateLimit-Remaining': '99', 'RateLimit-Reset': '1' },
  });
  t.deepEqual(rateDecision({ perMinute: 6, burst: 10 }, true, 7.5), {
    allowed: true,
    retryAfterSeconds: 0,
    headers: { 'RateLimit-Limit': '10', 'RateLimit-Remaining': '7', 'RateLimit-Reset': '25' },
  });
  t.deepEqual(rateDecision({ perMinute: 60, burst: 5 }, true, 5).headers, {
    'RateLimit-Limit': '5',
    'RateLimit-Remaining': '5',
    'RateLimit-Reset': '0',
  });
});

test('the value of Retry-After: the whole seconds until one token is back, rounded up, at least 1', (t) => {
  const retryAfter = (perMinute: number, remaining: number) =>
    rateDecision({ perMinute, burst: 10 }, false, remaining).retryAfterSeconds;
  t.is(retryAfter(1, 0), 60, 'one a minute, empty: a minute');
  t.is(retryAfter(6, 0), 10, 'ten seconds a token');
  t.is(retryAfter(6, 0.5), 5, 'half a token there: half the wait');
  t.is(retryAfter(6, 0.05), 10, '9.5 s rounds up to 10');
  t.is(retryAfter(60, 0), 1);
  t.is(retryAfter(600, 0), 1, 'a tenth of a second is still 1 s');
  t.is(retryAfter(600, 0.99), 1, 'a millisecond is still 1 s');
  t.is(retryAfter(60, 1), 1, 'never 0 when refused');
});

test('a refused request: allowed false, RateLimit-Remaining 0 and RateLimit-Reset the seconds to a full bucket', (t) => {
  t.deepEqual(rateDecision({ perMinute: 60, burst: 3 }, false, 0.25), {
    allowed: false,
    retryAfterSeconds: 1,
    headers: { 'RateLimit-Limit': '3', 'RateLimit-Remaining': '0', 'RateLimit-Reset': '3' },
  });
  t.deepEqual(rateDecision({ perMinute: 1, burst: 5 }, false, 0), {
    allowed: false,
    retryAfterSeconds: 60,
    headers: { 'RateLimit-Limit': '5', 'RateLimit-Remaining': '0', 'RateLimit-Reset': '300' },
  });
});
