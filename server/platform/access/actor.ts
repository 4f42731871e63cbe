// Who acts on the organisation's records. Every posting function, query and representation below the HTTP layer
// takes an Actor, never a request or an API key: a REST call, an operator command, a DMS connection and a
// background job all act on documents, and each says who it is, whose records it touches and what it may do.
// Key-only facts (rate limits, the key's prefix and name) stay at the HTTP edge.
import { scopeCatalogue } from './scopes.js';

/** The organisation an actor acts for, with the settings that rules depend on. */
export interface ActingOrganization {
  id: string;
  name: string;
  baseCurrency: string;
  deliveryModuleEnabled: boolean;
  fieldSalesModuleEnabled: boolean;
}

interface ActorBase {
  organization: ActingOrganization;
  /** What the actor may do, as API scopes (`customers:pii`, `payments:read`). */
  scopes: ReadonlySet<string>;
}

/** A partner system calling the REST API with a key. */
export interface ApiKeyActor extends ActorBase {
  kind: 'api_key';
  apiKeyId: string;
  environment: 'sandbox' | 'production';
}

/** The distributor management system pushing documents (DMS ingest). */
export interface DmsConnectionActor extends ActorBase {
  kind: 'dms_connection';
  connectionId: string;
}

/** A person running the operator CLI, or the sandbox seeding on the operator's behalf. */
export interface OperatorActor extends ActorBase {
  kind: 'operator';
  /** What acted (`admin customer import`, `sandbox bootstrap`), for the record. */
  name: string;
}

/** A background job (webhook delivery, a connector's posting). */
export interface JobActor extends ActorBase {
  kind: 'job';
  queue: string;
}

export type Actor = ApiKeyActor | DmsConnectionActor | OperatorActor | JobActor;

export function operatorActor(organization: ActingOrganization, name: string): OperatorActor {
  // Operators hold every scope the spec defines (the catalogue is read from the spec, never listed twice).
  return { kind: 'operator', organization, scopes: new Set(Object.keys(scopeCatalogue())), name };
}

/**
 * A job acting for an organisation with exactly the scopes given: a webhook's data.object is read with none, so
 * that personal fields (customers:pii) never leave in an event.
 */
export function jobActor(organization: ActingOrganization, queue: string, scopes: readonly string[] = []): JobActor {
  return { kind: 'job', organization, scopes: new Set(scopes), queue };
}

/** The actor's id for the record (events, ledger rows): `api_key:key_…`, `operator:sandbox bootstrap`. */
export function actorId(actor: Actor): string {
  switch (actor.kind) {
    case 'api_key':
      return `api_key:${actor.apiKeyId}`;
    case 'dms_connection':
      return `dms_connection:${actor.connectionId}`;
    case 'operator':
      return `operator:${actor.name}`;
    case 'job':
      return `job:${actor.queue}`;
  }
}
