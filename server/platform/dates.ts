// Dates and timestamps that passed the spec's format check but that PostgreSQL would refuse (year 0, or a UTC
// offset beyond its +-15:59) are refused here with the field named, never as a 500.

const FIRST_YEAR = 1;
const LAST_YEAR = 9999;

/** Why a date-time string cannot be stored, or null when it can. Also normalises it to UTC (drops offsets). */
export function timestampProblem(value: string): string | null {
  const time = Date.parse(value);
  if (Number.isNaN(time)) return 'is not a date-time';
  const year = new Date(time).getUTCFullYear();
  return year < FIRST_YEAR || year > LAST_YEAR ? `must be between the years ${FIRST_YEAR} and ${LAST_YEAR}` : null;
}

/** The timestamp in UTC with milliseconds (`2026-11-22T08:00:00.000Z`). */
export function toUtc(value: string): string {
  return new Date(Date.parse(value)).toISOString();
}

/** Why a calendar date (`YYYY-MM-DD`) cannot be stored, or null when it can. */
export function dateProblem(value: string): string | null {
  const year = Number(value.slice(0, 4));
  return year < FIRST_YEAR || year > LAST_YEAR ? `must be between the years ${FIRST_YEAR} and ${LAST_YEAR}` : null;
}
