// What commands print, in one place: text for people (tables with a header row, name/value lines), JSON for
// scripts (--json: stdout holds that document and nothing else) and CSV for spreadsheets (--csv: RFC 4180, a header
// row, CRLF line ends). Every list command takes --json and --csv through listFormatOptions and prints through
// printList, so the three agree on the rows. Output goes to the run's stdout (io.ts), never to process.stdout.
import { Option, type Command } from 'commander';
import { io } from './io.js';

export function printJson(value: unknown): void {
  io().stdout(JSON.stringify(value, null, 2) + '\n');
}

export function printText(...lines: string[]): void {
  io().stdout(lines.join('\n') + '\n');
}

export function warn(message: string): void {
  io().stderr(`warning: ${message}\n`);
}

/** Name/value lines, names padded to one column. */
export function fields(entries: [string, string][], indent = '  '): string[] {
  const width = Math.max(...entries.map(([name]) => name.length));
  return entries.map(([name, value]) => `${indent}${name.padEnd(width)}  ${value}`);
}

/** A plain text table with a header row. */
export function table(headers: string[], rows: string[][]): string[] {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ');
  return [line(headers), ...rows.map(line)];
}

/**
 * One CSV field (RFC 4180, 2.5-2.7): quoted when it holds a comma, a double quote, CR or LF (or starts or ends with
 * a space, which some readers trim), a double quote inside written twice. No CSV library is installed; the rule is
 * short enough to keep here, and test/admin/output.test.ts holds it to the RFC's cases.
 */
export function csvField(value: string): string {
  return /[",\r\n]|^\s|\s$/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** A CSV document: the header record, then one record per row, each ended by CRLF (RFC 4180, 2.1-2.3). */
export function csv(headers: string[], rows: string[][]): string {
  return [headers, ...rows].map((record) => record.map(csvField).join(',') + '\r\n').join('');
}

export interface ListFormat {
  json?: boolean;
  csv?: boolean;
}

/** --json and --csv (not both) on a list command. */
export function listFormatOptions(command: Command, jsonHelp = 'print the rows as JSON'): Command {
  return command
    .addOption(new Option('--json', jsonHelp).conflicts('csv'))
    .addOption(new Option('--csv', 'print the rows as CSV (RFC 4180: a header row, CRLF line ends)'));
}

export interface Column<T> {
  header: string;
  value(row: T): string | number | boolean | null | undefined;
}

/**
 * A list: a table with a header row (or `empty` when there is no row), the same rows as CSV with --csv, and with
 * --json the document `json` makes of them (the rows themselves by default).
 */
export function printList<T>(
  format: ListFormat,
  rows: readonly T[],
  columns: Column<T>[],
  options: { empty?: string; json?: (rows: readonly T[]) => unknown } = {},
): void {
  if (format.json) {
    printJson(options.json ? options.json(rows) : rows);
    return;
  }
  const cells = rows.map((row) => columns.map((column) => cellText(column.value(row))));
  const headers = columns.map((column) => column.header);
  if (format.csv) io().stdout(csv(headers, cells));
  else if (rows.length === 0 && options.empty !== undefined) printText(options.empty);
  else printText(...table(headers, cells));
}

function cellText(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  return String(value);
}
