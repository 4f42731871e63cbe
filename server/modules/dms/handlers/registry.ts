// The composed registry of DMS document handlers: each document type's declaration names the DMS documentTypes that
// map onto it (`dms`, MappedDocument in types.ts, in its module's manifest); a module declares those that are not
// document types of the service (`dmsHandlers`, DmsDeclarations: master data, and the DMS's own reason codes,
// inventory summary and daily totals). server/composition/modules.ts builds the registry from every manifest and
// installs it as that list loads, as it does the posting registry. A type with no handler is stored and stays
// `received` with the note `No mapper for <type> yet`.
import {
  declaredDocumentTypes,
  type DocumentDeclarations,
  type DocumentType,
} from '../../../domain/documents/registry.js';
import type { DmsDeclarations, DocumentHandler, MappedDocument, VanDayTrips } from './types.js';

export type DmsHandlerRegistry = ReadonlyMap<string, DocumentHandler>;

/** Builds the registry from the modules' declarations; a documentType declared twice is a bug. */
export function dmsHandlerRegistryOf(
  declarations: readonly ({ name: string } & DmsDeclarations & DocumentDeclarations<DocumentType & MappedDocument>)[],
): DmsHandlerRegistry {
  const handlers = new Map<string, DocumentHandler>();
  const owners = new Map<string, string>();
  const declared = [
    ...declaredDocumentTypes(declarations).map(({ module, declared }) => ({ module, mapped: declared.dms ?? {} })),
    ...declarations.map((module) => ({ module: module.name, mapped: module.dmsHandlers ?? {} })),
  ];
  for (const { module, mapped } of declared) {
    for (const [type, handler] of Object.entries(mapped)) {
      if (handlers.has(type))
        throw new Error(`DMS documentType ${type} is mapped by two modules (${owners.get(type)}, ${module})`);
      handlers.set(type, handler);
      owners.set(type, module);
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

/** The trips a van day posts on, as the one module that offers them declares (`dmsVanDayTrips`); none or two: a bug. */
export function vanDayTripsOf(declarations: readonly ({ name: string } & DmsDeclarations)[]): VanDayTrips {
  const offered = declarations.filter((module) => module.dmsVanDayTrips);
  if (offered.length !== 1)
    throw new Error(
      `One module offers the DMS's van day trips (dmsVanDayTrips), not ${offered.length}: ${offered
        .map((module) => module.name)
        .join(', ')}`,
    );
  return offered[0]!.dmsVanDayTrips!;
}

let installedTrips: VanDayTrips | null = null;

/** Makes `trips` the ones the kit's van day reads (the composition calls it); returns them. */
export function installVanDayTrips(trips: VanDayTrips): VanDayTrips {
  installedTrips = trips;
  return installedTrips;
}

/** The installed van day trips (server/modules/dms/handlers/van-day.ts reads them). */
export function vanDayTrips(): VanDayTrips {
  if (!installedTrips)
    throw new Error(
      "No van day trips are installed: the composition (server/composition/modules.ts) installs the trips module's.",
    );
  return installedTrips;
}
