// A create (a POST to a collection) can succeed only once per code: the example's `outletCode` exists after the
// first run, and a second run would get 422 for a reason that says nothing about the deployment. So the codes a
// create carries are made new for each run: every top-level field named `code` or `…Code`, and every value of
// `externalCodes`. The form of the code is kept, so it still matches the field's pattern: its last digits (up to
// six) are replaced by as many digits of the run's number; a code without final digits gets the number appended.
// A PATCH is treated the same way: it changes a record this run created, and a code it gives that record
// (`externalCodes` linking an existing customer) is held after the first run by the previous run's record.
// Upserts by code and replacements are not changed: they are meant to be repeated and answer 200 the second time.

export interface FreshCodes {
  body: unknown;
  /** JSON pointers of the fields changed (`/outletCode`), for the report. */
  fields: string[];
  /** The new codes, in field order. */
  codes: string[];
}

/** A new run number: six random digits. */
export function newRunNumber(): string {
  return String(Math.floor(Math.random() * 1_000_000)).padStart(6, '0');
}

export function freshCode(code: string, runNumber: string): string {
  const digits = /[0-9]{1,6}$/.exec(code)?.[0];
  if (!digits) return `${code}${runNumber}`;
  return code.slice(0, code.length - digits.length) + runNumber.slice(runNumber.length - digits.length);
}

export function freshenCodes(body: unknown, runNumber: string): FreshCodes {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return { body, fields: [], codes: [] };
  const fields: string[] = [];
  const codes: string[] = [];
  const fresh = (field: string, value: string) => {
    const code = freshCode(value, runNumber);
    fields.push(field);
    if (!codes.includes(code)) codes.push(code);
    return code;
  };
  const copy: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(body)) {
    if (typeof value === 'string' && /(^c|C)ode$/.test(name)) copy[name] = fresh(`/${name}`, value);
    else if (name === 'externalCodes' && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      copy[name] = Object.fromEntries(
        Object.entries(value).map(([system, code]) => [
          system,
          typeof code === 'string' ? fresh(`/externalCodes/${system}`, code) : code,
        ]),
      );
    } else copy[name] = value;
  }
  return { body: copy, fields, codes };
}
