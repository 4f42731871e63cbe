// Following `$ref`s inside one bundled OpenAPI document (generated/openapi.json, spec/releases/*.json), shared by
// the request pipeline (operation index, field hints), the contract command and the breaking-change check.
type Json = Record<string, unknown>;

/** Follows a local `$ref` (`#/components/...`), repeatedly; anything else (undefined included) is returned as it is. */
export function resolveRef(document: Json, node: unknown): Json {
  let current = node as Json;
  for (let hops = 0; typeof current?.$ref === 'string' && hops < 16; hops += 1) {
    const ref = current.$ref as string;
    if (!ref.startsWith('#/')) throw new Error(`only references within the document are supported, not ${ref}`);
    current = ref
      .slice(2)
      .split('/')
      .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<Json>((at, segment) => {
        const next = at?.[segment];
        if (next === undefined) throw new Error(`the reference ${ref} points at nothing`);
        return next as Json;
      }, document);
  }
  return current;
}
