// The service's clock for business dates: "today" (a document's default date, an activity's day) and the daily
// reconciliation's cut-off, both on the distributor's own clock (its organisation's IANA time zone, Africa/Kampala by
// default: businessTodayIn, localTimeIn), not UTC. Timestamps of bookkeeping (leases, retries, heartbeats) use the real clock and the
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

/** The distributor's zone when the organisation names none (the organisations table's default). */
export const DEFAULT_TIME_ZONE = 'Africa/Kampala';

// One formatter per zone: building an Intl.DateTimeFormat costs far more than formatting with it.
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterOf(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    // en-CA with h23: numeric parts that need no locale knowledge; midnight is 00, never 24.
    formatter = new Intl.DateTimeFormat('en-CA', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/**
 * Whether the name is an IANA time zone (`Africa/Kampala`, `Europe/London`, `UTC`) this runtime knows. Offsets
 * (`+03:00`) and abbreviations (`EAT`) are refused: an offset ignores daylight saving, an abbreviation is ambiguous.
 */
export function isIanaTimeZone(name: string): boolean {
  if (!/^(UTC|[A-Za-z]+(\/[A-Za-z0-9_+-]+)+)$/.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** The calendar date and minute of the day at `at` on the clocks of `timeZone`. */
export function localTimeIn(at: Date, timeZone: string): { date: string; minutes: number } {
  const parts = Object.fromEntries(
    formatterOf(timeZone)
      .formatToParts(at)
      .map((part) => [part.type, part.value]),
  );
  return { date: `${parts.year}-${parts.month}-${parts.day}`, minutes: Number(parts.hour) * 60 + Number(parts.minute) };
}

/** Today's calendar date in the distributor's zone by the business clock (`2026-11-27` in Kampala from 21:00 UTC on the 26th). */
export function businessTodayIn(timeZone: string): string {
  return localTimeIn(businessNow(), timeZone).date;
}
