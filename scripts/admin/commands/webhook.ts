// webhook add | list | disable | enable | test | deliveries | resend | rotate-secret. The CLI only writes rows
// (deliveries pending and due now) and, in the same transaction, their webhooks.deliver jobs; a running worker sends them. A secret is printed once, by add and
// rotate-secret; list never shows one.
import { InvalidArgumentError, type Command } from 'commander';
import type { ServiceConfig } from '../../../server/platform/config.js';
import {
  addEndpoint,
  disableEndpoint,
  enableEndpoint,
  listDeliveries,
  listEndpoints,
  resendDelivery,
  rotateSecret,
  testEndpoint,
  ALL_EVENTS,
  type EndpointSettings,
  type EndpointSummary,
} from '../../../server/platform/webhooks/endpoints.js';
import { getOrganization } from '../../../server/platform/access/organizations.js';
import { webhookEventTypes } from '../../../server/composition/modules.js';
import { withDatabase, withDeliveries } from '../database.js';
import { commaList, integerIn, parseHours } from '../options.js';
import { fields, listFormatOptions, printJson, printList, printText } from '../output.js';

const ONCE =
  'The signing secret is shown only now; it is stored sealed. Give it to the receiver to verify Service-Signature.';

export function parseEventTypes(raw: string): string[] {
  const types = [...new Set(commaList(raw))];
  const known = webhookEventTypes.join(', ');
  if (types.length === 0) throw new InvalidArgumentError(`Give event types (${known}) or * for all.`);
  if (types.includes(ALL_EVENTS)) return [ALL_EVENTS];
  const unknown = types.filter((type) => !webhookEventTypes.includes(type));
  if (unknown.length > 0)
    throw new InvalidArgumentError(`Unknown event type ${unknown.join(', ')}; the types are ${known} (or * for all).`);
  return types;
}

function settingsOf(config: ServiceConfig): EndpointSettings {
  return {
    policy: { allowLoopback: config.webhookAllowLoopback },
    secretKey: config.webhookSecretKey,
    eventTypes: webhookEventTypes,
  };
}

function status(endpoint: EndpointSummary): string {
  return endpoint.enabled ? 'enabled' : `disabled ${endpoint.disabledAt} (${endpoint.disabledReason})`;
}

export function registerWebhookCommands(program: Command): void {
  const webhook = program.command('webhook').description('webhook endpoints and their delivery logs');

  webhook
    .command('add')
    .description('add an endpoint (https only; private and loopback addresses refused); prints its signing secret once')
    .requiredOption('--org <org-id>', 'the organisation')
    .requiredOption('--url <url>', 'where events are POSTed (https://...)')
    .requiredOption(
      '--events <types>',
      `comma-separated event types (${webhookEventTypes.join(', ')}) or * for all`,
      parseEventTypes,
    )
    .option('--json', 'print {"id", "secret"} only')
    .action(async (options: { org: string; url: string; events: string[]; json?: boolean }) => {
      const added = await withDatabase((db, config) =>
        addEndpoint(db, settingsOf(config), { organizationId: options.org, url: options.url, events: options.events }),
      );
      if (options.json) return printJson({ id: added.id, secret: added.secret });
      printText(
        `Webhook endpoint ${added.id} added for ${options.org}`,
        ...fields([
          ['url', options.url],
          ['events', options.events.join(', ')],
          ['secret', added.secret],
        ]),
        '',
        ONCE,
      );
    });

  listFormatOptions(
    webhook
      .command('list')
      .description("an organisation's endpoints (never their secrets)")
      .requiredOption('--org <org-id>', 'the organisation'),
    'print a JSON array',
  ).action(async (options: { org: string; json?: boolean; csv?: boolean }) => {
    const endpoints = await withDatabase(async (db) => {
      await getOrganization(db, options.org);
      return listEndpoints(db, options.org);
    });
    printList(
      options,
      endpoints,
      [
        { header: 'ID', value: (e) => e.id },
        { header: 'URL', value: (e) => e.url },
        { header: 'EVENTS', value: (e) => e.events.join(',') },
        { header: 'FAILURES', value: (e) => e.consecutiveFailures },
        { header: 'STATUS', value: (e) => status(e) },
      ],
      { empty: `No webhook endpoints for ${options.org}.` },
    );
  });

  webhook
    .command('disable')
    .description('stop sending to an endpoint (its events are not queued while it is off)')
    .argument('<endpoint-id>', 'the endpoint')
    .option('--json', 'print the endpoint')
    .action(async (id: string, options: { json?: boolean }) => {
      const endpoint = await withDatabase((db) => disableEndpoint(db, id));
      if (options.json) printJson(endpoint);
      else printText(`Webhook endpoint ${id} is ${status(endpoint)}.`);
    });

  webhook
    .command('enable')
    .description('turn an endpoint back on; its failed deliveries are sent again')
    .argument('<endpoint-id>', 'the endpoint')
    .option('--json', 'print {"endpoint", "resent"}')
    .action(async (id: string, options: { json?: boolean }) => {
      const result = await withDeliveries((db, enqueue) => enableEndpoint(db, enqueue, id));
      if (options.json) printJson(result);
      else printText(`Webhook endpoint ${id} is enabled; ${result.resent} failed deliveries will be sent again.`);
    });

  webhook
    .command('test')
    .description('send a webhook.test event to this endpoint only')
    .argument('<endpoint-id>', 'the endpoint')
    .option('--json', 'print {"eventId", "deliveryId"}')
    .action(async (id: string, options: { json?: boolean }) => {
      const queued = await withDeliveries((db, enqueue) => testEndpoint(db, enqueue, id));
      if (options.json) printJson(queued);
      else
        printText(
          `webhook.test ${queued.eventId} queued as delivery ${queued.deliveryId}; see webhook deliveries ${id}.`,
        );
    });

  webhook
    .command('deliveries')
    .description("the endpoint's delivery log, newest first")
    .argument('<endpoint-id>', 'the endpoint')
    .option('--limit <n>', 'at most this many (1-1000)', integerIn(1, 1000), 50);
  listFormatOptions(webhook.commands.at(-1)!, 'print a JSON array').action(
    async (id: string, options: { limit: number; json?: boolean; csv?: boolean }) => {
      const deliveries = await withDatabase((db) => listDeliveries(db, id, options.limit));
      printList(
        options,
        deliveries,
        [
          { header: 'ID', value: (d) => d.id },
          { header: 'EVENT', value: (d) => d.eventId },
          { header: 'TYPE', value: (d) => d.eventType },
          { header: 'STATUS', value: (d) => d.status },
          { header: 'ATTEMPTS', value: (d) => d.attempts },
          { header: 'CODE', value: (d) => (d.lastResponseCode === null ? '-' : d.lastResponseCode) },
          { header: 'MS', value: (d) => (d.lastDurationMs === null ? '-' : Math.round(d.lastDurationMs)) },
          { header: 'NEXT ATTEMPT', value: (d) => d.nextAttemptAt ?? '-' },
          { header: 'ERROR', value: (d) => d.lastError ?? '' },
        ],
        { empty: `No deliveries for ${id}.` },
      );
    },
  );

  webhook
    .command('resend')
    .description('send a delivery again now (the same event id), with a fresh retry schedule')
    .argument('<delivery-id>', 'the delivery (from webhook deliveries)')
    .option('--json', 'print the delivery')
    .action(async (id: string, options: { json?: boolean }) => {
      const delivery = await withDeliveries((db, enqueue) => resendDelivery(db, enqueue, id));
      if (options.json) printJson(delivery);
      else printText(`Delivery ${id} (${delivery.eventType} ${delivery.eventId}) will be sent again.`);
    });

  webhook
    .command('rotate-secret')
    .description('issue a new signing secret; the old one also signs during the overlap (two v1 in the header)')
    .argument('<endpoint-id>', 'the endpoint')
    .option('--overlap-hours <hours>', 'how long the old secret keeps signing (0: it stops now)', parseHours, 24)
    .option('--json', 'print {"id", "secret", "previousSecretExpiresAt"} only')
    .action(async (id: string, options: { overlapHours: number; json?: boolean }) => {
      const rotated = await withDatabase((db, config) =>
        rotateSecret(db, config.webhookSecretKey, id, options.overlapHours),
      );
      if (options.json) return printJson(rotated);
      printText(
        `Webhook endpoint ${id} has a new signing secret`,
        ...fields([
          ['secret', rotated.secret],
          ['old secret stops', rotated.previousSecretExpiresAt ?? 'now'],
        ]),
        '',
        ONCE,
      );
    });
}
