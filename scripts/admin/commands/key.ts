// key create | rotate | revoke | list. A secret is printed once, at create or rotate; list never shows one.
import { Option, type Command } from 'commander';
import type { Config, Environment } from '../../../server/platform/config.js';
import {
  createApiKey,
  listApiKeys,
  revokeApiKey,
  rotateApiKey,
  type KeySummary,
} from '../../../server/platform/access/api-keys.js';
import type { RateLimits } from '../../../server/platform/access/rate-limit.js';
import { withDatabase } from '../database.js';
import { parseCidrs, parseFutureTimestamp, parseHours, parseRateLimits, parseScopes } from '../options.js';
import { getOrganization } from '../../../server/platform/access/organizations.js';
import { fields, listFormatOptions, printJson, printList, printText, warn } from '../output.js';

const ONCE = 'The secret is shown only now; only its SHA-256 hash is kept. Store it in a secret manager.';

function warnIfOtherEnvironment(config: Config, environment: Environment): void {
  if (environment !== config.environment) {
    warn(
      `this deployment runs ENVIRONMENT=${config.environment}; a ${environment} key authenticates only against a ${environment} deployment`,
    );
  }
}

function status(key: KeySummary, now = Date.now()): string {
  if (key.revokedAt) return `revoked ${key.revokedAt}`;
  if (key.expiresAt && Date.parse(key.expiresAt) <= now) return `expired ${key.expiresAt}`;
  return key.expiresAt ? `active until ${key.expiresAt}` : 'active';
}

function rates(limits: RateLimits): string {
  return Object.entries(limits)
    .map(([rateClass, limit]) => `${rateClass}=${limit.perMinute}/${limit.burst}`)
    .join(',');
}

export function registerKeyCommands(program: Command): void {
  const key = program.command('key').description('API keys: create, rotate, revoke, list');

  key
    .command('create')
    .description('issue an API key; prints its secret once')
    .requiredOption('--org <org-id>', 'the organisation')
    .addOption(
      new Option('--env <environment>', 'sandbox (the key begins erp_test_) or production (erp_live_)')
        .choices(['sandbox', 'production'])
        .makeOptionMandatory(),
    )
    .requiredOption('--scopes <list>', 'comma-separated scopes (the scopes command lists them)', parseScopes)
    .option('--name <name>', 'a label for people', 'API key')
    .option('--ip <cidrs>', 'comma-separated CIDRs the key may call from (default: anywhere)', parseCidrs)
    .option('--expires <timestamp>', 'ISO 8601 time the key stops working (default: never)', (raw: string) =>
      parseFutureTimestamp(raw),
    )
    .option('--member <member-id>', 'the organisation member who asked for the key (kept on the key; GET /me shows it)')
    .option(
      '--rate <limits>',
      'perMinute/burst per class, e.g. read=600/100,write=120/30,ingest=60/60 (classes left out keep these defaults)',
      parseRateLimits,
    )
    .option('--json', 'print {"id", "prefix", "secret"} only')
    .action(
      async (options: {
        org: string;
        env: Environment;
        scopes: string[];
        name: string;
        member?: string;
        ip?: string[];
        expires?: Date;
        rate?: Partial<RateLimits>;
        json?: boolean;
      }) => {
        const issued = await withDatabase(async (db, config) => {
          warnIfOtherEnvironment(config, options.env);
          return createApiKey(db, {
            organizationId: options.org,
            environment: options.env,
            scopes: options.scopes,
            name: options.name,
            ipAllowlist: options.ip ?? [],
            expiresAt: options.expires ?? null,
            rateLimits: options.rate ?? {},
            createdByMemberId: options.member ?? null,
          });
        });
        if (options.json) return printJson({ id: issued.id, prefix: issued.prefix, secret: issued.secret });
        printText(
          `API key ${issued.id} created for ${options.org}`,
          ...fields([
            ['prefix', issued.prefix],
            ['environment', options.env],
            ['scopes', options.scopes.join(', ')],
            ...(options.member ? [['member', options.member] as [string, string]] : []),
            ['secret', issued.secret],
          ]),
          '',
          ONCE,
        );
      },
    );

  key
    .command('rotate')
    .description(
      'issue a replacement key (same organisation, environment, scopes, limits, allowlist); the old one stops after the overlap',
    )
    .argument('<key-id>', 'the key to replace')
    .option('--overlap-hours <hours>', 'how long the old key keeps working (0: it stops now)', parseHours, 24)
    .option('--json', 'print {"id", "prefix", "secret", "oldKeyExpiresAt"} only')
    .action(async (id: string, options: { overlapHours: number; json?: boolean }) => {
      const issued = await withDatabase((db) => rotateApiKey(db, id, options.overlapHours));
      if (options.json)
        return printJson({
          id: issued.id,
          prefix: issued.prefix,
          secret: issued.secret,
          oldKeyExpiresAt: issued.oldKeyExpiresAt,
        });
      printText(
        `API key ${issued.id} replaces ${id}`,
        ...fields([
          ['prefix', issued.prefix],
          ['secret', issued.secret],
          ['old key stops', issued.oldKeyExpiresAt],
        ]),
        '',
        ONCE,
      );
    });

  key
    .command('revoke')
    .description('stop a key at once')
    .argument('<key-id>', 'the key')
    .option('--json', 'print {"id", "revokedAt"}')
    .action(async (id: string, options: { json?: boolean }) => {
      const revokedAt = await withDatabase((db) => revokeApiKey(db, id));
      if (options.json) printJson({ id, revokedAt });
      else printText(`API key ${id} revoked at ${revokedAt}.`);
    });

  listFormatOptions(
    key
      .command('list')
      .description("list an organisation's keys (never their secrets)")
      .requiredOption('--org <org-id>', 'the organisation'),
    'print a JSON array',
  ).action(async (options: { org: string; json?: boolean; csv?: boolean }) => {
    const keys = await withDatabase(async (db) => {
      await getOrganization(db, options.org);
      return listApiKeys(db, options.org);
    });
    printList(
      options,
      keys,
      [
        { header: 'ID', value: (k) => k.id },
        { header: 'PREFIX', value: (k) => k.prefix },
        { header: 'ENV', value: (k) => k.environment },
        { header: 'NAME', value: (k) => k.name },
        { header: 'SCOPES', value: (k) => k.scopes.join(',') },
        { header: 'RATES', value: (k) => rates(k.rateLimits) },
        { header: 'IP', value: (k) => k.ipAllowlist.join(',') || 'any' },
        { header: 'STATUS', value: (k) => status(k) },
      ],
      { empty: `No keys for ${options.org}.` },
    );
  });
}
