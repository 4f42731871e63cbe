// How often a posting that waits for another document's (a receipt for its invoice's) is looked at again: every
// WAIT_SECONDS while the wait is young, then a quarter of its age, never more than WAIT_MAX_SECONDS apart (run.ts).
import test from 'ava';
import { WAIT_MAX_SECONDS, WAIT_SECONDS, waitSeconds } from '../../server/modules/postings/run.js';

const created = new Date(Date.UTC(2026, 10, 23, 8, 0, 0));
const after = (seconds: number) => created.getTime() + seconds * 1000;

test('a young wait is looked at every WAIT_SECONDS', (t) => {
  t.is(waitSeconds(created, after(0)), WAIT_SECONDS);
  t.is(waitSeconds(created, after(19)), WAIT_SECONDS);
});

test('an older wait is looked at after a quarter of its age', (t) => {
  t.is(waitSeconds(created, after(40)), 10);
  t.is(waitSeconds(created, after(100)), 25);
});

test('never more than WAIT_MAX_SECONDS apart, however long it waits', (t) => {
  t.is(waitSeconds(created, after(121)), WAIT_MAX_SECONDS);
  t.is(waitSeconds(created, after(47 * 3600)), WAIT_MAX_SECONDS);
});

test('the looks over ten minutes of waiting: about 30, not 120', (t) => {
  let age = 0;
  let looks = 0;
  while (age < 600) {
    age += waitSeconds(created, after(age));
    looks += 1;
  }
  t.true(looks <= 30, `${looks} looks`);
  t.true(looks >= 20, `${looks} looks`);
});
