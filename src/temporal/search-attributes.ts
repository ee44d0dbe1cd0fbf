/**
 * Registers the run workflow's search attributes on namespaces that lack them (the dev
 * server started by `backfill dev` has them already; a fresh cluster namespace does not),
 * and waits until the namespace accepts them. The operator API answers as soon as they are
 * stored, before the frontend's view of the namespace refreshes (seconds later): a start in
 * between was refused with only "Failed to start Workflow", so a user's first run failed.
 */
import { status } from '@grpc/grpc-js';
import type { Client } from '@temporalio/client';
import { SearchAttributeType } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { UsageError } from '../domain/usage-error';
import { pollUntil } from '../util/poll-until';
import { SEARCH_ATTRIBUTES } from '../workflows/search-attributes';
import { grpcCause, statusName } from './errors';

type Attribute = (typeof SEARCH_ATTRIBUTES)[number];

const { IndexedValueType } = temporal.api.enums.v1;
const INDEXED: Record<string, temporal.api.enums.v1.IndexedValueType> = {
  [SearchAttributeType.KEYWORD]: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  [SearchAttributeType.INT]: IndexedValueType.INDEXED_VALUE_TYPE_INT,
};
/** How the `temporal` CLI spells each type. */
const CLI_TYPE: Record<string, string> = { [SearchAttributeType.KEYWORD]: 'Keyword', [SearchAttributeType.INT]: 'Int' };

export interface EnsureOptions {
  /** How long to wait for the namespace to accept attributes just registered. */
  timeoutMs?: number;
}

export async function ensureSearchAttributes(client: Client, options: EnsureOptions = {}): Promise<void> {
  const namespace = client.options.namespace;
  const existing = await client.connection.operatorService.listSearchAttributes({ namespace });
  const have = new Set(Object.keys(existing.customAttributes ?? {}));
  const missing = SEARCH_ATTRIBUTES.filter((k) => !have.has(k.name));
  if (missing.length === 0) return;
  try {
    await client.connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((k) => [k.name, INDEXED[k.type]])),
    });
  } catch (err) {
    throw new UsageError(registrationRefused(err, namespace, missing));
  }
  const timeoutMs = options.timeoutMs ?? 60_000;
  const accepted = await pollUntil(async () => ((await acceptsQueriesOn(client, missing)) ? true : undefined), { timeoutMs, intervalMs: 250 });
  if (!accepted) {
    throw new Error(
      `registered the search attributes ${missing.map((k) => k.name).join(', ')} in namespace ${namespace}, but its frontend did not accept them within ${timeoutMs / 1000} s; ` +
        'start again in a minute (nothing was started)',
    );
  }
}

/** A visibility query on the attributes passes the same check a start's attributes do, on the frontend's current view of the namespace. */
async function acceptsQueriesOn(client: Client, attributes: Attribute[]): Promise<boolean> {
  const query = attributes.map((k) => `${k.name} = ${k.type === SearchAttributeType.INT ? '0' : "''"}`).join(' AND ');
  try {
    await client.workflow.count(query);
    return true;
  } catch (err) {
    if (grpcCause(err)?.code === status.INVALID_ARGUMENT) return false; // an attribute the frontend does not know yet
    throw err;
  }
}

/** Why the server would not register them, and the one command that does it by hand. */
export function registrationRefused(err: unknown, namespace: string, missing: Attribute[]): string {
  const grpc = grpcCause(err);
  const said = grpc ? `${statusName(grpc.code)}: ${grpc.details || grpc.message}` : (err as Error).message;
  const command =
    `temporal operator search-attribute create --namespace ${namespace} ` + missing.map((k) => `--name ${k.name} --type ${CLI_TYPE[k.type]}`).join(' ');
  if (/cannot have more than \d+ search attribute/i.test(said)) {
    return (
      `namespace ${namespace} has no free search attribute slot for ${missing.map((k) => `${k.name} (${CLI_TYPE[k.type]})`).join(', ')} (${said}); ` +
      `a SQL visibility store holds a fixed number per type: remove unused ones (temporal operator search-attribute list / remove --namespace ${namespace}), then run: ${command}`
    );
  }
  return (
    `could not register the search attributes backfill runs use in namespace ${namespace} (${said}); ` +
    `have a namespace admin run once: ${command} (on Temporal Cloud: tcld namespace search-attributes add), then start again`
  );
}
