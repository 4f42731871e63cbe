// The composed registry of DMS document handlers: each module declares the documentTypes it maps in its manifest
// (`dmsHandlers`, DmsDeclarations in types.ts), the DMS its own (master data, reason codes, the inventory summary,
// daily totals); server/composition/modules.ts builds the registry from every manifest and installs it as that list
// loads, as it does the posting registry. A type with no handler is stored and stays `received` with the note
// `No mapper for <type> yet`.
import type { DmsDeclarations, DocumentHandler } from './types.js';

export type DmsHandlerRegistry = ReadonlyMap<string, DocumentHandler>;

/** Builds the registry from the modules' declarations; a documentType declared twice is a bug. */
export function dmsHandlerRegistryOf(
  declarations: readonly ({ name: string } & DmsDeclarations)[],
): DmsHandlerRegistry {
  const handlers = new Map<string, DocumentHandler>();
  const owners = new Map<string, string>();
  for (const module of declarations) {
    for (const [type, handler] of Object.entries(module.dmsHandlers ?? {})) {
      if (handlers.has(type))
        throw new Error(`DMS documentType ${type} is mapped by two modules (${owners.get(type)}, ${module.name})`);
      handlers.set(type, handler);
      owners.set(type, module.name);
    }
  }
  return handlers;
}

let installed: DmsHandlerRegistry | null = null;

/** Makes `registry` the one the DMS reads (the composition calls it); returns it. */
export function installDmsHandlers(registry: DmsHandlerRegistry): DmsHandlerRegistry {
  installed = registry;
  return installed;
}

/** The handler of a documentType, or undefined when no module maps it. */
export function handlerOf(type: string): DocumentHandler | undefined {
  if (!installed)
    throw new Error(
      "No DMS handler registry is installed: the composition (server/composition/modules.ts) installs the one built from the modules' manifests.",
    );
  return installed.get(type);
}
