// CSV of a console list (RFC 4180: CRLF, quotes doubled). A cell that a spreadsheet would read as a formula
// (=, +, -, @, tab, CR first) is prefixed with an apostrophe: a DMS document number is not a formula.
import type { Response } from 'express';

function cell(value: unknown): string {
  let text = value === null || value === undefined ? '' : String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function toCsv(header: readonly string[], rows: readonly (readonly unknown[])[]): string {
  return [header, ...rows].map((row) => row.map(cell).join(',')).join('\r\n') + '\r\n';
}

export function sendCsv(
  res: Response,
  filename: string,
  header: readonly string[],
  rows: readonly (readonly unknown[])[],
): void {
  res
    .status(200)
    .type('text/csv; charset=utf-8')
    .set('content-disposition', `attachment; filename="${filename.replace(/[^A-Za-z0-9._-]/g, '_')}"`)
    .send(toCsv(header, rows));
}
