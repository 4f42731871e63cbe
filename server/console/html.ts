// HTML of the console, built with one tagged template: every interpolated value is escaped unless it is already
// Html (made by this template or by `raw` for constant markup). There is no other way to put text into a page, so a
// DMS body, a customer's name or a reason text can never become markup.

/** Markup that is safe to put into a page as is. */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/** The text as HTML text or an attribute's value (quoted): &, <, >, quotes and backticks escaped. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c]!);
}

type Value = Html | string | number | boolean | null | undefined | readonly Value[];

function render(value: Value): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

/** The page template: literal parts are kept, values escaped (arrays joined, null/undefined/false left out). */
export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i += 1) out += render(values[i]!) + strings[i + 1]!;
  return new Html(out);
}

/** Constant markup written in this folder (never a value from a request or the database). */
export function raw(markup: string): Html {
  return new Html(markup);
}
