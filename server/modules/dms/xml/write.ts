// What the service writes in XML: the flag file of a batch (its documents' flags, as DmsFlag, one `flag` element
// each with the fields as attributes) and the two XML schemas a DMS vendor validates against: the file's, written
// from the document kinds' shapes (shapes.ts: the same schemas as the JSON documents), and the flag file's.
import type { DmsFlag } from '../flags.js';
import { DMS_NAMESPACE } from './read.js';
import { DOCUMENT_SHAPES, type Shape } from './shapes.js';

const escape = (text: string) =>
  text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/\r/g, '&#13;')
    .replace(/\n/g, '&#10;')
    .replace(/\t/g, '&#9;');

/** The batch's flag file. */
export function flagFile(
  batch: {
    batchId: string;
    system: string;
    status: string;
    error: { message: string; line: number; column: number } | null;
  },
  flags: readonly DmsFlag[],
): string {
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<dmsFlags xmlns="${DMS_NAMESPACE}" batchId="${escape(batch.batchId)}" system="${escape(batch.system)}" status="${batch.status}">`,
  ];
  if (batch.error)
    lines.push(
      `  <error message="${escape(batch.error.message)}" line="${batch.error.line}" column="${batch.error.column}"/>`,
    );
  for (const flag of flags) {
    const attributes: [string, string | null | undefined][] = [
      ['documentId', flag.documentId],
      ['distributorCode', flag.distributorCode],
      ['documentType', flag.documentType],
      ['documentNumber', flag.documentNumber],
      ['state', flag.state],
      ['receivedAt', flag.receivedAt],
      ['updatedAt', flag.updatedAt],
      ['note', flag.note],
      ['mikonoTable', flag.mikonoRef?.table],
      ['mikonoId', flag.mikonoRef?.id],
      ['quickbooksRef', flag.quickbooksRef],
      ['postedAt', flag.postedAt],
      ['reasonCode', flag.reasonCode],
      ['reasonText', flag.reasonText],
    ];
    lines.push(
      `  <flag ${attributes
        .filter(([, value]) => value !== undefined && value !== null)
        .map(([name, value]) => `${name}="${escape(value!)}"`)
        .join(' ')}/>`,
    );
  }
  lines.push('</dmsFlags>', '');
  return lines.join('\n');
}

const HEADER = `<?xml version="1.0" encoding="UTF-8"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="${DMS_NAMESPACE}" xmlns="${DMS_NAMESPACE}" elementFormDefault="qualified">`;

/** The XML schema of the flag file. */
export const FLAGS_XSD = `${HEADER}
  <xs:element name="dmsFlags">
    <xs:complexType>
      <xs:sequence>
        <xs:element name="error" minOccurs="0">
          <xs:complexType>
            <xs:attribute name="message" type="xs:string" use="required"/>
            <xs:attribute name="line" type="xs:nonNegativeInteger" use="required"/>
            <xs:attribute name="column" type="xs:nonNegativeInteger" use="required"/>
          </xs:complexType>
        </xs:element>
        <xs:element name="flag" minOccurs="0" maxOccurs="unbounded">
          <xs:complexType>
            <xs:attribute name="documentId" type="xs:string" use="required"/>
            <xs:attribute name="distributorCode" type="xs:string" use="required"/>
            <xs:attribute name="documentType" type="xs:string" use="required"/>
            <xs:attribute name="documentNumber" type="xs:string" use="required"/>
            <xs:attribute name="state" use="required">
              <xs:simpleType>
                <xs:restriction base="xs:string">
                  <xs:enumeration value="received"/>
                  <xs:enumeration value="posted"/>
                  <xs:enumeration value="rejected"/>
                  <xs:enumeration value="superseded"/>
                </xs:restriction>
              </xs:simpleType>
            </xs:attribute>
            <xs:attribute name="receivedAt" type="xs:dateTime" use="required"/>
            <xs:attribute name="updatedAt" type="xs:dateTime" use="required"/>
            <xs:attribute name="note" type="xs:string"/>
            <xs:attribute name="mikonoTable" type="xs:string"/>
            <xs:attribute name="mikonoId" type="xs:string"/>
            <xs:attribute name="quickbooksRef" type="xs:string"/>
            <xs:attribute name="postedAt" type="xs:dateTime"/>
            <xs:attribute name="reasonCode">
              <xs:simpleType>
                <xs:restriction base="xs:string">
                  <xs:pattern value="R0[1-9]"/>
                </xs:restriction>
              </xs:simpleType>
            </xs:attribute>
            <xs:attribute name="reasonText" type="xs:string"/>
          </xs:complexType>
        </xs:element>
      </xs:sequence>
      <xs:attribute name="batchId" type="xs:string" use="required"/>
      <xs:attribute name="system" type="xs:string" use="required"/>
      <xs:attribute name="status" use="required">
        <xs:simpleType>
          <xs:restriction base="xs:string">
            <xs:enumeration value="received"/>
            <xs:enumeration value="parsed"/>
            <xs:enumeration value="failed"/>
          </xs:restriction>
        </xs:simpleType>
      </xs:attribute>
    </xs:complexType>
  </xs:element>
</xs:schema>
`;

/**
 * The XML schema of the DMS file: a `dmsFile` of documents, each element named by its documentType with its
 * envelope's fields and typed body. An object is an `xs:all` of its fields (any order; the required ones required),
 * an array an element of `item`s, a value its XSD type with the JSON schema's bounds (patterns unanchored, as XSD
 * patterns always match the whole value). A body open to any field (a type this version does not map) is lax.
 */
export function fileXsd(): string {
  const out: string[] = [
    HEADER,
    '  <xs:element name="dmsFile">',
    '    <xs:complexType>',
    '      <xs:choice minOccurs="0" maxOccurs="unbounded">',
  ];
  for (const type of DOCUMENT_SHAPES.keys()) out.push(`        <xs:element name="${type}" type="${type}"/>`);
  out.push('      </xs:choice>', '    </xs:complexType>', '  </xs:element>');
  for (const [type, shape] of DOCUMENT_SHAPES) {
    if (shape.kind !== 'object') continue;
    const fields = new Map([...shape.fields].filter(([name]) => name !== 'documentType'));
    out.push(
      `  <xs:complexType name="${type}">`,
      ...objectContent({ ...shape, fields }, '    '),
      '  </xs:complexType>',
    );
  }
  out.push('</xs:schema>', '');
  return out.join('\n');
}

function objectContent(shape: Extract<Shape, { kind: 'object' }>, indent: string): string[] {
  if (shape.fields.size === 0) {
    return [
      `${indent}<xs:sequence>`,
      `${indent}  <xs:any namespace="##targetNamespace" processContents="lax" minOccurs="0" maxOccurs="unbounded"/>`,
      `${indent}</xs:sequence>`,
    ];
  }
  const out = [`${indent}<xs:all>`];
  for (const [name, field] of shape.fields)
    out.push(...element(name, field.shape, field.required ? 1 : 0, 1, `${indent}  `));
  out.push(`${indent}</xs:all>`);
  return out;
}

function element(
  name: string,
  shape: Shape,
  minOccurs: number,
  maxOccurs: number | 'unbounded',
  indent: string,
): string[] {
  const occurs = `${minOccurs === 1 ? '' : ` minOccurs="${minOccurs}"`}${maxOccurs === 1 ? '' : ` maxOccurs="${maxOccurs}"`}`;
  const simple = simpleType(shape);
  if (typeof simple === 'string') return [`${indent}<xs:element name="${name}" type="${simple}"${occurs}/>`];
  if (simple)
    return [
      `${indent}<xs:element name="${name}"${occurs}>`,
      ...simple.map((line) => `${indent}  ${line}`),
      `${indent}</xs:element>`,
    ];
  const content =
    shape.kind === 'object'
      ? objectContent(shape, `${indent}    `)
      : shape.kind === 'array'
        ? [
            `${indent}    <xs:sequence>`,
            ...element('item', shape.item, shape.minItems ?? 0, shape.maxItems ?? 'unbounded', `${indent}      `),
            `${indent}    </xs:sequence>`,
          ]
        : [
            `${indent}    <xs:sequence>`,
            `${indent}      <xs:any namespace="##targetNamespace" processContents="lax" minOccurs="0" maxOccurs="unbounded"/>`,
            `${indent}    </xs:sequence>`,
          ];
  return [
    `${indent}<xs:element name="${name}"${occurs}>`,
    `${indent}  <xs:complexType>`,
    ...content,
    `${indent}  </xs:complexType>`,
    `${indent}</xs:element>`,
  ];
}

/** A value's XSD type: a built-in type's name, an anonymous restriction's lines, or null for an object or array. */
function simpleType(shape: Shape): string | string[] | null {
  if (shape.kind === 'boolean') return 'xs:boolean';
  if (shape.kind === 'number') return 'xs:decimal';
  if (shape.kind === 'integer') {
    const facets = [
      shape.minimum !== undefined ? `<xs:minInclusive value="${shape.minimum}"/>` : null,
      shape.maximum !== undefined ? `<xs:maxInclusive value="${shape.maximum}"/>` : null,
    ].filter(Boolean);
    return facets.length === 0
      ? 'xs:integer'
      : [
          '<xs:simpleType>',
          '  <xs:restriction base="xs:integer">',
          ...facets.map((f) => `    ${f}`),
          '  </xs:restriction>',
          '</xs:simpleType>',
        ];
  }
  if (shape.kind === 'string') {
    if (shape.format === 'date') return 'xs:date';
    if (shape.format === 'date-time') return 'xs:dateTime';
    const facets = [
      ...(shape.enum ?? []).map((value) => `<xs:enumeration value="${escape(value)}"/>`),
      ...(shape.pattern
        ? [`<xs:pattern value="${escape(shape.pattern.replace(/^\^/, '').replace(/\$$/, ''))}"/>`]
        : []),
      ...(shape.minLength !== undefined ? [`<xs:minLength value="${shape.minLength}"/>`] : []),
      ...(shape.maxLength !== undefined ? [`<xs:maxLength value="${shape.maxLength}"/>`] : []),
    ];
    return facets.length === 0
      ? 'xs:string'
      : [
          '<xs:simpleType>',
          '  <xs:restriction base="xs:string">',
          ...facets.map((f) => `    ${f}`),
          '  </xs:restriction>',
          '</xs:simpleType>',
        ];
  }
  if (shape.kind === 'any') return 'xs:string';
  return null;
}

/**
 * A DMS file of JSON documents (the inverse of read.ts): each document an element named by its documentType, each
 * field an element, each array's entries `item` elements. The README's samples, the tests and the bench write
 * their files with it.
 */
export function writeDmsFile(documents: readonly Record<string, unknown>[]): string {
  const out = ['<?xml version="1.0" encoding="UTF-8"?>', `<dmsFile xmlns="${DMS_NAMESPACE}">`];
  for (const { documentType, ...fields } of documents) {
    out.push(
      `  <${String(documentType)}>${Object.entries(fields)
        .map(([name, value]) => elementOf(name, value))
        .join('')}</${String(documentType)}>`,
    );
  }
  out.push('</dmsFile>', '');
  return out.join('\n');
}

function elementOf(name: string, value: unknown): string {
  if (value === undefined || value === null) return '';
  if (Array.isArray(value)) return `<${name}>${value.map((item) => elementOf('item', item)).join('')}</${name}>`;
  if (typeof value === 'object')
    return `<${name}>${Object.entries(value as Record<string, unknown>)
      .map(([field, inner]) => elementOf(field, inner))
      .join('')}</${name}>`;
  return `<${name}>${escape(String(value))}</${name}>`;
}
