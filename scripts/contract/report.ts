// What the contract command prints: one line per request (operation, and example when it has named ones) and a
// last line `N passed, N failed` alone, which scripts can look for.
import { dmsChangesLine } from './dms.js';
import type { Outcome, RunChanges } from './runner.js';

export function outcomeLine(outcome: Outcome): string {
  const { request } = outcome;
  const example = request.exampleName ? ` (example: ${request.exampleName})` : '';
  const answered = outcome.status === undefined ? '---' : `${outcome.status} ${outcome.ms}ms`;
  const notes = outcome.notes.length > 0 ? `  (${outcome.notes.join('; ')})` : '';
  const reason = outcome.reason ? `  ${oneLine(outcome.reason)}` : '';
  const requestId = outcome.requestId ? ` [${outcome.requestId}]` : '';
  return `${outcome.skipped ? 'SKIP' : outcome.passed ? 'PASS' : 'FAIL'}  ${request.method} ${request.template}${example} ${answered}${requestId}${reason}${notes}`;
}

/** With --verbose: what was sent and every violation, indented under the line. */
export function outcomeDetails(outcome: Outcome): string[] {
  const lines: string[] = [];
  if (outcome.sent)
    lines.push(
      `      sent ${outcome.request.method} ${outcome.sent.url}${outcome.sent.body ? ` ${oneLine(outcome.sent.body)}` : ''}`,
    );
  for (const violation of outcome.violations) lines.push(`      - ${oneLine(violation)}`);
  return lines;
}

export function summaryLine(outcomes: Outcome[]): string {
  const skipped = outcomes.filter((o) => o.skipped).length;
  const passed = outcomes.filter((o) => o.passed && !o.skipped).length;
  return `${passed} passed, ${outcomes.length - passed - skipped} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 400 ? `${flat.slice(0, 400)}…` : flat;
}

/**
 * What the run changed in the organisation, before the summary: the records it wrote (created, or changed by a write
 * that named them), by kind, and what it sent to the DMS connection.
 */
export function changesLines(changes: RunChanges, organization: string): string[] {
  const total = changes.written.reduce((sum, [, ids]) => sum + ids.length, 0);
  const kinds = changes.written.map(([prefix, ids]) => `${prefix} ${ids.length} (${ids.join(', ')})`).join('; ');
  return [
    total === 0
      ? `Changed in ${organization}: no record written`
      : `Changed in ${organization}: ${total} record${total === 1 ? '' : 's'} written or changed by this run: ${kinds}`,
    dmsChangesLine(changes.dms, changes.dmsSkipped),
  ];
}
