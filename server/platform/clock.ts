// The service's clock for business dates: "today" (a document's default date, an activity's day) and the daily
// reconciliation's cut-off. Timestamps of bookkeeping (leases, retries, heartbeats) use the real clock and the
// database's, never this one: shifting them would only move work, not test anything.
//
// A test-only offset (`TEST_CLOCK_OFFSET_DAYS`, refused in production) moves this clock ahead or back, so the
// suite can prove that nothing it checks depends on the date it runs (see README, "Tests and the date").

const DAY_MS = 86_400_000;
let offsetMs = 0;

/** Sets the offset in whole days (the service's start does it from its configuration). */
export function setClockOffsetDays(days: number): void {
  offsetMs = days * DAY_MS;
}

/** Now, by the service's business clock. */
export function businessNow(): Date {
  return new Date(Date.now() + offsetMs);
}

/** Today's calendar date in UTC by the business clock (`2026-11-27`). */
export function businessToday(): string {
  return businessNow().toISOString().slice(0, 10);
}
