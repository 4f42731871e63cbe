// Every background job of the service, one line per module. The worker role runs them; the API role only sends.
import type { JobDefinition } from './platform/jobs/jobs.js';

export function jobDefinitions(): JobDefinition<never>[] {
  return [];
}
