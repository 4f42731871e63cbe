// The canonical DMS document format, as the spec defines it (DmsDocument: an envelope and a typed body per
// documentType), checked here rather than by the request validator: a document that does not match is not a 400 for
// the whole batch but a `rejected` flag of its own (R09 naming the field), and the others go on. The schemas are the
// spec's own (generated/openapi.json), compiled once with Ajv; nothing here repeats them.
//
// Also here: what a document is known by (its natural key; a return's includes its date, customer and a fingerprint
// of its lines, because return numbers repeat), the hash its content is compared by (SHA-256 of its canonical JSON),
// and the checks made on arrival (R01, R04, R07) before anything is stored as received.
import { createHash } from 'node:crypto';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { Decimal } from 'decimal.js';
import type { components } from '../../../generated/api-types.js';
import { lineAmounts, documentTotals, roundToCurrency } from '../../domain/money.js';
import { canonicalJson } from '../../platform/canonical-json.js';
import { apiDocument } from '../../platform/spec.js';
import { DmsRejection } from './reasons.js';

type Schemas = components['schemas'];
export type DmsDocumentJson = Schemas['DmsDocumentEnvelope'];
/** The typed body of a document schema of the spec (`DmsSaleInvoiceDocument` -> its body). */
export type BodyOf<K extends keyof Schemas> = Schemas[K] extends { body?: infer B } ? NonNullable<B> : never;

// ajv-formats is CommonJS whose typings declare an ES default export; at run time the import is the function.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/** The documentTypes the spec maps, each with its schema's name, read from DmsDocument's oneOf. */
export const DOCUMENT_SCHEMAS: ReadonlyMap<string, string> = new Map(
  ((apiDocument as any).components.schemas.DmsDocument.oneOf as { $ref: string }[]).flatMap(({ $ref }) => {
    const name = $ref.split('/').at(-1)!;
    const branch = (apiDocument as any).components.schemas[name];
    const type = branch.allOf?.[1]?.properties?.documentType?.const as string | undefined;
    return type ? [[type, name] as const] : [];
  }),
);

/** Master data: a new content under the same key is a new version that updates the record (no transaction status). */
export const MASTER_DATA_TYPES: ReadonlySet<string> = new Set([
  'customer',
  'product',
  'price',
  'salesman',
  'warehouse',
  'reason_code',
]);
/** Documents that name the customer they are for: without a customer code they are R01. */
const CUSTOMER_DOCUMENTS: ReadonlySet<string> = new Set([
  'sale_invoice',
  'sale_return',
  'credit_note',
  'customer_collection',
]);
/** Number prefixes followed by the route code, which must be the body's routeCode. */
const ROUTE_NUMBERED: Readonly<Record<string, string>> = {
  sale_invoice: 'CS',
  van_stock_out: 'VU',
  sale_return: 'RT',
  customer_collection: 'PY',
};

let compiled: { envelope: ValidateFunction; branches: Map<string, ValidateFunction> } | null = null;

function validators() {
  if (compiled) return compiled;
  // validateSchema false: the description's schemas are not checked against Ajv's meta-schema here (compiling that
  // meta-schema is about 0.3 CPU-s of the first DMS document a process checks); the spec is linted and checked by its
  // own tests (test/spec), and a schema Ajv cannot compile still fails at compile() (decision 0057).
  const ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: true, validateSchema: false });
  addFormats(ajv);
  // The whole description as one schema: the branches' $refs (#/components/schemas/...) resolve inside it.
  ajv.addSchema({ $id: 'api', components: (apiDocument as any).components });
  const compile = (name: string) => ajv.compile({ $ref: `api#/components/schemas/${name}` });
  compiled = {
    envelope: compile('DmsDocumentEnvelope'),
    branches: new Map([...DOCUMENT_SCHEMAS].map(([type, name]) => [type, compile(name)])),
  };
  return compiled;
}

/** Ajv's errors as the flag's text: `/body/lines/0/quantity must be >= 1`, the first three. */
function describe(errors: readonly ErrorObject[] | null | undefined): string {
  const seen = new Set<string>();
  for (const error of errors ?? []) {
    const where = error.instancePath || '/';
    const detail =
      error.keyword === 'additionalProperties' || error.keyword === 'unevaluatedProperties'
        ? `has an unknown field ${String((error.params as Record<string, unknown>).additionalProperty ?? (error.params as Record<string, unknown>).unevaluatedProperty)}`
        : error.keyword === 'enum'
          ? `must be one of ${((error.params as { allowedValues: unknown[] }).allowedValues).join(', ')}`
          : (error.message ?? 'is not valid');
    seen.add(`${where} ${detail}`);
    if (seen.size === 3) break;
  }
  return [...seen].join('; ');
}

/** What could be read of a document that failed the checks, for its flag. */
export interface DocumentHeader {
  documentType: string;
  documentNumber: string;
  documentDate: string | null;
  distributorCode: string;
  salesmanCode: string | null;
  status: string | null;
}

const text = (value: unknown, max = 64): string => (typeof value === 'string' ? value.slice(0, max) : '');

export function headerOf(document: unknown): DocumentHeader {
  const d = (typeof document === 'object' && document !== null && !Array.isArray(document) ? document : {}) as Record<
    string,
    unknown
  >;
  const date = text(d.documentDate, 10);
  return {
    documentType: text(d.documentType),
    documentNumber: text(d.documentNumber),
    documentDate: /^\d{4}-\d{2}-\d{2}$/.test(date) ? date : null,
    distributorCode: text(d.distributorCode),
    salesmanCode: text(d.salesmanCode) || null,
    status: text(d.status, 20) || null,
  };
}

/** The DMS status a document carries (its type's first status when absent). */
export function statusOf(document: DmsDocumentJson): string {
  if (document.status) return document.status;
  if (document.documentType === 'cheque_processing') return 'cleared';
  return MASTER_DATA_TYPES.has(document.documentType) ? 'active' : 'confirmed';
}

/**
 * The format checks and the other checks made on arrival, in the order a DMS would want to hear them: the schema
 * (R09 naming the field), the distributor (R07), the customer (R01), the arithmetic (R04). Returns the typed document.
 */
export function checkOnArrival(document: unknown, distributorCode: string): DmsDocumentJson {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw new DmsRejection('R09', 'Format: a document is a JSON object (DmsDocument in the API description).');
  }
  const { envelope, branches } = validators();
  if (!envelope(document)) throw new DmsRejection('R09', `Format: ${describe(envelope.errors)}.`);
  const typed = document as DmsDocumentJson;
  const branch = branches.get(typed.documentType);
  if (branch && !branch(document))
    throw new DmsRejection('R09', `Format of a ${typed.documentType}: ${describe(branch.errors)}.`);
  if (typed.distributorCode !== distributorCode) {
    throw new DmsRejection(
      'R07',
      `The document is for distributor ${typed.distributorCode}; this connection serves ${distributorCode} only.`,
    );
  }
  const body = typed.body as Record<string, unknown>;
  const prefix = ROUTE_NUMBERED[typed.documentType];
  if (prefix && !typed.documentNumber.startsWith(prefix + String(body.routeCode))) {
    throw new DmsRejection(
      'R09',
      `Format: documentNumber ${typed.documentNumber} must start with ${prefix} and the document's route code ${String(body.routeCode)}.`,
    );
  }
  if (CUSTOMER_DOCUMENTS.has(typed.documentType) && body.customerCode === undefined) {
    throw new DmsRejection(
      'R01',
      `The ${typed.documentType} ${typed.documentNumber} names no customer code (body.customerCode).`,
    );
  }
  checkArithmetic(typed);
  return typed;
}

/** R04 on arrival: what the document's own figures say, without the service's data (tax rates are checked at posting). */
function checkArithmetic(document: DmsDocumentJson): void {
  if (document.documentType === 'sale_invoice') {
    const body = document.body as BodyOf<'DmsSaleInvoiceDocument'>;
    body.lines.forEach((line, i) => {
      if (line.free && (new Decimal(line.unitPrice).gt(0) || new Decimal(line.discount ?? 0).gt(0))) {
        throw new DmsRejection(
          'R04',
          `Line ${i + 1} is a free issue with a price or a discount; a free issue is priced 0.`,
        );
      }
      if (new Decimal(line.discount ?? 0).gt(new Decimal(line.quantity).times(line.unitPrice))) {
        throw new DmsRejection(
          'R04',
          `Line ${i + 1}'s discount ${line.discount} is more than its quantity x unitPrice.`,
        );
      }
    });
    checkTotals(
      body.lines.map((line) => ({ ...line, taxRate: '0' })),
      body.totals,
      body.currency,
      false,
    );
  } else if (document.documentType === 'credit_note') {
    const body = document.body as BodyOf<'DmsCreditNoteDocument'>;
    if ((body.lines === undefined) === (body.amount === undefined)) {
      throw new DmsRejection('R09', 'Format: a credit note carries either lines or an amount alone.');
    }
  } else if (document.documentType === 'customer_collection') {
    const body = document.body as BodyOf<'DmsCustomerCollectionDocument'>;
    const allocated = (body.allocations ?? []).reduce((sum, a) => sum.plus(a.amount), new Decimal(0));
    if (allocated.gt(body.amount))
      throw new DmsRejection(
        'R04',
        `The allocations total ${allocated.toFixed()}, more than the amount ${body.amount} collected.`,
      );
  }
}

interface PricedLine {
  quantity: number;
  unitPrice: string;
  discount?: string;
  taxRate: string;
}

/**
 * The document's totals against its lines with the service's arithmetic (domain/money: per line, rounded to the
 * currency, half up). `withTax`: compare the tax as well (at posting, with the products' rates).
 */
export function checkTotals(
  lines: readonly PricedLine[],
  totals: { subtotal: string; discount: string; tax: string; total: string },
  currency: string,
  withTax: boolean,
): void {
  const computed = documentTotals(
    lines.map((line) =>
      lineAmounts(
        { quantity: line.quantity, unitPrice: line.unitPrice, discount: line.discount ?? '0', taxRate: line.taxRate },
        currency,
      ),
    ),
    currency,
  );
  const same = (a: string, b: string) => new Decimal(roundToCurrency(a, currency)).eq(b);
  const wrong: string[] = [];
  if (!same(totals.subtotal, computed.subtotal))
    wrong.push(`subtotal ${totals.subtotal} (the lines make ${computed.subtotal})`);
  if (!same(totals.discount, computed.discount))
    wrong.push(`discount ${totals.discount} (the lines make ${computed.discount})`);
  if (withTax && !same(totals.tax, computed.tax))
    wrong.push(`tax ${totals.tax} (the lines at the products' tax rates make ${computed.tax})`);
  if (!new Decimal(totals.subtotal).minus(totals.discount).plus(totals.tax).eq(totals.total))
    wrong.push(
      `total ${totals.total} (subtotal - discount + tax makes ${new Decimal(totals.subtotal).minus(totals.discount).plus(totals.tax).toFixed()})`,
    );
  if (wrong.length > 0)
    throw new DmsRejection('R04', `The lines do not add up to the document's totals: ${wrong.join('; ')}.`);
}

/** The natural key: distributor, type and number; a return's also its date, customer and a fingerprint of its lines. */
export function naturalKeyOf(document: DmsDocumentJson): string {
  const base = `${document.distributorCode}|${document.documentType}|${document.documentNumber}`;
  if (document.documentType !== 'sale_return') return base;
  const body = document.body as BodyOf<'DmsSaleReturnDocument'>;
  const fingerprint = createHash('sha256').update(canonicalJson(body.lines)).digest('hex').slice(0, 32);
  return `${document.distributorCode}|RT|${document.documentNumber}|${document.documentDate}|${body.customerCode}|${fingerprint}`;
}

/** SHA-256 of the canonical JSON (RFC 8785) of the document: key order and number forms do not change it. */
export function contentHashOf(document: unknown): string {
  return createHash('sha256').update(canonicalJson(document)).digest('hex');
}
