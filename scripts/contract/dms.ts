// The DMS examples (operations marked `x-contract-dms: true`: the documents push and the XML file upload) are not
// like the other writes. The service keeps every document it was sent for ever (a flag is never lost), posts it
// (stock, money, a trip for the salesman's day), lets it wait up to 48 hours for what it names, and counts it in
// the day's reconciliation, which notifies the organisation of differences. Nothing of that can be undone over the
// API, and a partner's key cannot make an organisation of its own. So they are sent only when asked for
// (`--dms DISTRIBUTOR_CODE`, for an organisation kept for the check: docs/decisions/0036), and then:
// - the examples' distributor code (the one most of them carry) becomes the connection's, which the API does not
//   tell: the one given with --dms; an example that carries another code on purpose keeps it;
// - the number of every transaction document (anything but master data) is made new for the run, the same way in
//   every example of the operation (the return names the invoice's new number), so that a second run, or a sample
//   sent by hand with the example's number, never meets it as "the same number with other content" (R05). The
//   customer and product the examples make (their documents' numbers are their codes) get new codes too, the same
//   in every example that names them: the run's sales name records the run made itself. The other master data
//   keeps its codes, which name the organisation's set-up (the route and salesman, a warehouse that must be a
//   location of the service, a reason code): the same content again answers the same flag;
// - each flag of the answer is judged: `rejected` fails, unless the example declares the flags it gets
//   (`x-expected-flags`, the `rejected_*` examples of malformed documents), and then they must be exactly those.
import { mapStrings } from './bind.js';
import type { Json } from './operations.js';

/** Document types whose number is a code other documents name. */
const MASTER_DATA = new Set(['customer', 'product', 'price', 'salesman', 'warehouse', 'reason_code']);
/** Master data whose code is made new for the run (a record of the run's own), the same in every operation. */
const RUN_OWN_MASTER_DATA = new Set(['customer', 'product']);

export interface ExpectedFlag {
  state: string;
  reasonCode?: string;
}

/** What the run sent to the DMS, for the report of what it changed. */
export interface DmsChanges {
  /** Documents sent (JSON members and XML files' documents are counted as sent; a file's are flagged later). */
  documents: number;
  files: number;
  /** Flags answered, by state (and reason code for rejected ones: `rejected R07`). */
  flags: Map<string, number>;
  /** The examples' numbers and the numbers this run sent instead. */
  numbers: Map<string, string>;
}

export function newDmsChanges(): DmsChanges {
  return { documents: 0, files: 0, flags: new Map(), numbers: new Map() };
}

/** A number made new for the run, in its form: its last digits (3 to 6) replaced, else the run's digits appended. */
export function freshNumber(number: string, runNumber: string): string {
  const digits = /[0-9]{3,}$/.exec(number)?.[0];
  if (!digits) return `${number}-${runNumber}`;
  const replaced = digits.slice(-6);
  return number.slice(0, number.length - replaced.length) + runNumber.slice(runNumber.length - replaced.length);
}

function documentsIn(value: unknown): Json[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
  const record = value as Json;
  if (Array.isArray(record.documents))
    return record.documents.filter((d): d is Json => d !== null && typeof d === 'object' && !Array.isArray(d));
  return [record];
}

/** The XML file's documents: `<type>` elements holding a `<documentNumber>` (and `<distributorCode>`). */
function xmlDocuments(xml: string): { type: string; number: string; distributorCode?: string }[] {
  const found: { type: string; number: string; distributorCode?: string }[] = [];
  for (const match of xml.matchAll(/<([a-z_]+)>((?:(?!<\/\1>)[\s\S])*)<\/\1>/g)) {
    const number = /<documentNumber>([^<]*)<\/documentNumber>/.exec(match[2]!)?.[1];
    if (number === undefined) continue;
    found.push({
      type: match[1]!,
      number,
      distributorCode: /<distributorCode>([^<]*)<\/distributorCode>/.exec(match[2]!)?.[1],
    });
  }
  return found;
}

/** The run's DMS examples: one set of new numbers per operation, shared by its examples. */
export class DmsExamples {
  private readonly numbersByOperation = new Map<string, Map<string, string>>();
  /** The run's own customer and product codes, shared by every operation. */
  private readonly codes = new Map<string, string>();
  private readonly examplesCode = new Map<string, string | undefined>();

  constructor(
    readonly distributorCode: string,
    private readonly newRunNumber: () => string,
    readonly changes: DmsChanges = newDmsChanges(),
  ) {}

  /**
   * The body to send for one example of an operation, given every example body of that operation (`all`), with
   * notes saying what was changed.
   */
  prepare(operation: string, body: unknown, all: unknown[]): { body: unknown; notes: string[] } {
    if (!this.numbersByOperation.has(operation)) this.learn(operation, all);
    const numbers = new Map([...this.codes, ...this.numbersByOperation.get(operation)!]);
    const examplesCode = this.examplesCode.get(operation);
    const notes: string[] = [];
    let sent: unknown;
    if (typeof body === 'string') {
      sent = body
        .replace(
          /(<documentNumber>)([^<]*)(<\/documentNumber>)/g,
          (_, open: string, number: string, close: string) => open + (numbers.get(number) ?? number) + close,
        )
        .replace(
          /(<distributorCode>)([^<]*)(<\/distributorCode>)/g,
          (whole, open: string, code: string, close: string) =>
            code === examplesCode ? open + this.distributorCode + close : whole,
        )
        // Any other element that names one of the documents by its number (an invoice a return names).
        .replace(/>([A-Za-z0-9_./-]+)</g, (whole, text: string) =>
          numbers.has(text) ? `>${numbers.get(text)}<` : whole,
        );
    } else {
      sent = mapStrings(body, (s) => numbers.get(s) ?? s);
      for (const document of documentsIn(sent)) {
        if (document.distributorCode === examplesCode) document.distributorCode = this.distributorCode;
      }
    }
    const used = [...numbers].filter(([from]) =>
      typeof body === 'string' ? body.includes(from) : JSON.stringify(body).includes(JSON.stringify(from)),
    );
    for (const [from, to] of used) this.changes.numbers.set(from, to);
    if (used.length > 0)
      notes.push(`numbers and codes made new for this run: ${used.map(([from, to]) => `${from}->${to}`).join(', ')}`);
    if (examplesCode && examplesCode !== this.distributorCode)
      notes.push(`distributor ${examplesCode} sent as ${this.distributorCode}`);
    return { body: sent, notes };
  }

  private learn(operation: string, all: unknown[]): void {
    const runNumber = this.newRunNumber();
    const numbers = new Map<string, string>();
    const codes = new Map<string, number>();
    const count = (code: unknown) => {
      if (typeof code === 'string') codes.set(code, (codes.get(code) ?? 0) + 1);
    };
    for (const body of all) {
      const documents =
        typeof body === 'string'
          ? xmlDocuments(body).map(({ type, number, distributorCode }) => ({
              documentType: type,
              documentNumber: number,
              distributorCode,
            }))
          : documentsIn(body);
      for (const document of documents) {
        count(document.distributorCode);
        const { documentType, documentNumber } = document;
        if (typeof documentNumber !== 'string') continue;
        if (RUN_OWN_MASTER_DATA.has(String(documentType))) {
          if (!this.codes.has(documentNumber))
            this.codes.set(documentNumber, freshNumber(documentNumber, this.newRunNumber()));
        } else if (!MASTER_DATA.has(String(documentType)) && !numbers.has(documentNumber)) {
          numbers.set(documentNumber, freshNumber(documentNumber, runNumber));
        }
      }
    }
    this.numbersByOperation.set(operation, numbers);
    this.examplesCode.set(operation, [...codes].sort((a, b) => b[1] - a[1])[0]?.[0]);
  }

  /**
   * Judges the flags of a push's answer and counts them: undefined when they are what they should be, else why not.
   * `expected`: the flags the example declares (`x-expected-flags`); without, no flag may be `rejected`.
   */
  judge(answer: unknown, expected: ExpectedFlag[] | undefined): string | undefined {
    const record = (answer ?? {}) as { flags?: unknown; batchId?: unknown; documents?: unknown };
    if (!Array.isArray(record.flags)) {
      // A file's batch: its documents are parsed and flagged in the background.
      if (typeof record.batchId === 'string' && record.batchId.startsWith('dmf_')) this.changes.files += 1;
      return undefined;
    }
    const flags = record.flags as {
      state?: string;
      reasonCode?: string;
      reasonText?: string;
      documentNumber?: string;
    }[];
    this.changes.documents += flags.length;
    for (const flag of flags) {
      const key = flag.state === 'rejected' ? `rejected ${flag.reasonCode ?? ''}`.trim() : String(flag.state);
      this.changes.flags.set(key, (this.changes.flags.get(key) ?? 0) + 1);
    }
    if (expected) {
      const got = flags.map((f) => (f.reasonCode ? `${f.state} ${f.reasonCode}` : String(f.state)));
      const wanted = expected.map((f) => (f.reasonCode ? `${f.state} ${f.reasonCode}` : f.state));
      return JSON.stringify(got) === JSON.stringify(wanted)
        ? undefined
        : `the flags are [${got.join(', ')}], the example expects [${wanted.join(', ')}]${flags[0]?.reasonText ? ` (${flags[0].reasonText})` : ''}`;
    }
    const rejected = flags.filter((f) => f.state === 'rejected');
    if (rejected.length === 0) return undefined;
    return `${rejected.length} of ${flags.length} document${flags.length > 1 ? 's' : ''} rejected: ${rejected.map((f) => `${f.documentNumber ?? '?'} ${f.reasonCode ?? ''}: ${f.reasonText ?? ''}`).join('; ')}`;
  }
}

/** The line of the report that says what the run did to the DMS connection. */
export function dmsChangesLine(changes: DmsChanges | undefined, skipped: number): string {
  if (!changes)
    return `DMS: nothing sent (${skipped} request${skipped === 1 ? '' : 's'} skipped: --dms DISTRIBUTOR_CODE sends the DMS examples, into an organisation kept for this check)`;
  const flags = [...changes.flags].map(([state, n]) => `${n} ${state}`).join(', ');
  const files =
    changes.files > 0 ? `; ${changes.files} XML file${changes.files > 1 ? 's' : ''} (flagged in the background)` : '';
  const numbers =
    changes.numbers.size > 0
      ? `; numbers and codes made new for this run: ${[...changes.numbers].map(([from, to]) => `${from}->${to}`).join(', ')}`
      : '';
  return `DMS: ${changes.documents} document flag${changes.documents === 1 ? '' : 's'} answered${flags ? ` (${flags})` : ''}${files}${numbers}; they are kept, posted and reconciled like any DMS's`;
}
