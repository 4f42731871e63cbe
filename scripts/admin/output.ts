// What commands print: JSON for scripts (--json: stdout holds that document and nothing else), or text for people.
export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

export function printText(...lines: string[]): void {
  process.stdout.write(lines.join('\n') + '\n');
}

export function warn(message: string): void {
  process.stderr.write(`warning: ${message}\n`);
}

/** Name/value lines, names padded to one column. */
export function fields(entries: [string, string][], indent = '  '): string[] {
  const width = Math.max(...entries.map(([name]) => name.length));
  return entries.map(([name, value]) => `${indent}${name.padEnd(width)}  ${value}`);
}

/** A plain text table with a header row. */
export function table(headers: string[], rows: string[][]): string[] {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ');
  return [line(headers), ...rows.map(line)];
}
