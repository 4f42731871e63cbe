// How a webhook reads the record of a resource's event: the resource's own GET by id, as the delivery job's actor
// sees it (no scopes, so no personal fields). A record that no longer exists reads as null (the deleted-record object).
import { ApiError } from '../errors/api-error.js';
import { API_BASE_PATH } from '../spec.js';
import type { WebhookObject, WebhookObjectSource } from '../webhooks/objects.js';
import type { ResourceService } from './service.js';

export function resourceWebhookObject(
  service: Pick<ResourceService<never, unknown>, 'get'>,
  collection: string,
): WebhookObjectSource {
  return {
    async read(db, actor, id) {
      try {
        return (await service.get(db, actor, id)) as WebhookObject;
      } catch (error) {
        if (error instanceof ApiError && error.code === 'not_found') return null;
        throw error;
      }
    },
    fetchPath: (id) => `${API_BASE_PATH}/${collection}/${encodeURIComponent(id)}`,
  };
}
