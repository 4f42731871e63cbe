// Parsers for option values. Each throws commander's InvalidArgumentError naming what is wrong, so commander
// reports `error: option '--x <v>' argument '...' is invalid. <why>` and the CLI exits 2 before touching data.
import { InvalidArgumentError } from 'commander';
import ipaddr from 'ipaddr.js';
import { MODULES, type Module } from '../../server/platform/access/organizations.js';
import type { RateClass, RateLimit, RateLimits } from '../../server/platform/access/rate-limit.js';
import { scopeCatalogue } from '../../server/platform/access/scopes.js';
import { isIanaTimeZone } from '../../server/platform/clock.js';

const RATE_CLASSES: readonly RateClass[] = ['read', 'write', 'ingest'];
export const MAX_RATE = 1_000_000;

/** `a, b,,c` -> [a, b, c]. */
export function commaList(raw: string): string[] {
  return raw
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

export function parseScopes(raw: string): string[] {
  const known = Object.keys(scopeCatalogue());
  const scopes = commaList(raw);
  if (scopes.length === 0)
    throw new InvalidArgumentError(`Give at least one scope; the scopes are ${known.join(', ')}.`);
  const unknown = scopes.filter((scope) => !known.includes(scope));
  if (unknown.length > 0)
    throw new InvalidArgumentError(`Unknown scope ${unknown.join(', ')}; the scopes are ${known.join(', ')}.`);
  return [...new Set(scopes)];
}

export function parseCidrs(raw: string): string[] {
  const cidrs = commaList(raw);
  if (cidrs.length === 0)
    throw new InvalidArgumentError(
      'Give at least one CIDR (for example 203.0.113.0/24), or leave --ip out to allow any address.',
    );
  for (const cidr of cidrs) {
    if (ipaddr.isValidCIDR(cidr)) continue;
    const hint = ipaddr.isValid(cidr)
      ? ` (for the one address write ${cidr}/${ipaddr.parse(cidr).kind() === 'ipv4' ? 32 : 128})`
      : ' (for example 203.0.113.0/24 or 2001:db8::/32)';
    throw new InvalidArgumentError(`${cidr} is not a CIDR${hint}.`);
  }
  return cidrs;
}

const ISO_TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/**
 * An ISO 8601 timestamp with its offset (`2027-01-31T18:00:00Z`, `2027-01-31T21:00+03:00`) or a date
 * (`2027-01-31`, midnight UTC), in the future. A time without an offset is refused: whose local time would it be?
 */
export function parseFutureTimestamp(raw: string, now: Date = new Date()): Date {
  const match = ISO_TIMESTAMP.exec(raw.trim());
  if (!match)
    throw new InvalidArgumentError(
      'Expected an ISO 8601 timestamp with an offset, such as 2027-01-31T18:00:00Z or 2027-01-31T21:00:00+03:00, or a date such as 2027-01-31.',
    );
  const [, year, month, day, hour = '00', minute = '00', second = '00', offset = 'Z'] = match;
  const calendar = new Date(
    Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second)),
  );
  const sameFields =
    calendar.getUTCFullYear() === Number(year) &&
    calendar.getUTCMonth() === Number(month) - 1 &&
    calendar.getUTCDate() === Number(day) &&
    calendar.getUTCHours() === Number(hour) &&
    calendar.getUTCMinutes() === Number(minute) &&
    calendar.getUTCSeconds() === Number(second);
  const offsetOk = offset === 'Z' || (Number(offset.slice(1, 3)) <= 23 && Number(offset.slice(4, 6)) <= 59);
  const date = new Date(match[4] === undefined ? `${raw.trim()}T00:00:00Z` : raw.trim());
  if (!sameFields || !offsetOk || Number.isNaN(date.getTime()))
    throw new InvalidArgumentError(`${raw} is not a real date and time.`);
  if (date.getTime() <= now.getTime())
    throw new InvalidArgumentError(`${date.toISOString()} is in the past; a key must expire in the future.`);
  return date;
}

/** `read=600/100,write=120/30,ingest=60/60` (perMinute/burst per class); classes left out keep their defaults. */
export function parseRateLimits(raw: string): Partial<RateLimits> {
  const limits: Partial<Record<RateClass, RateLimit>> = {};
  const parts = commaList(raw);
  if (parts.length === 0)
    throw new InvalidArgumentError(
      'Expected class=perMinute/burst pairs, such as read=600/100,write=120/30,ingest=60/60.',
    );
  for (const part of parts) {
    const match = /^([a-z]+)=(\d+)\/(\d+)$/.exec(part);
    if (!match) throw new InvalidArgumentError(`${part} is not class=perMinute/burst (for example read=600/100).`);
    const [, rateClass, perMinute, burst] = match as unknown as [string, RateClass, string, string];
    if (!RATE_CLASSES.includes(rateClass))
      throw new InvalidArgumentError(`Unknown rate class ${rateClass}; the classes are ${RATE_CLASSES.join(', ')}.`);
    if (limits[rateClass]) throw new InvalidArgumentError(`The rate class ${rateClass} is given twice.`);
    const limit = { perMinute: Number(perMinute), burst: Number(burst) };
    for (const [name, value] of Object.entries(limit)) {
      if (value < 1 || value > MAX_RATE)
        throw new InvalidArgumentError(`${rateClass} ${name} must be from 1 to ${MAX_RATE}, not ${value}.`);
    }
    limits[rateClass] = limit;
  }
  return limits;
}

/** The modules to switch on (`delivery,field-sales`); an empty string switches both off. */
export function parseModules(raw: string): Module[] {
  const modules = commaList(raw);
  const unknown = modules.filter((module) => !(MODULES as readonly string[]).includes(module));
  if (unknown.length > 0)
    throw new InvalidArgumentError(
      `Unknown module ${unknown.join(', ')}; the modules are ${MODULES.join(', ')} (an empty string switches both off).`,
    );
  return [...new Set(modules)] as Module[];
}

export function parseOnOff(raw: string): boolean {
  if (raw === 'on') return true;
  if (raw === 'off') return false;
  throw new InvalidArgumentError('Expected on or off.');
}

export function integerIn(min: number, max: number): (raw: string) => number {
  return (raw) => {
    const value = Number(raw);
    if (!/^\d+$/.test(raw.trim()) || value < min || value > max)
      throw new InvalidArgumentError(`Expected a whole number from ${min} to ${max}.`);
    return value;
  };
}

/** Hours, 0 or more (fractions allowed), at most a year. */
export function parseHours(raw: string): number {
  const value = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw.trim()) || value > 8760)
    throw new InvalidArgumentError('Expected a number of hours from 0 to 8760.');
  return value;
}

/** An IANA time zone name this runtime knows (`Africa/Kampala`); offsets and abbreviations are refused. */
export function parseTimeZone(raw: string): string {
  const name = raw.trim();
  if (!isIanaTimeZone(name))
    throw new InvalidArgumentError(
      `${raw} is not an IANA time zone; give a name such as Africa/Kampala, Africa/Nairobi, Europe/London or UTC (not an offset such as +03:00 or an abbreviation such as EAT).`,
    );
  return name;
}
