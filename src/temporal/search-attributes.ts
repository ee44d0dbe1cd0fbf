/**
 * Registers the run workflow's search attributes on namespaces that lack them (the dev
 * server started by `backfill dev` has them already; a fresh cluster namespace does not).
 */
import type { Client } from '@temporalio/client';
import { SearchAttributeType } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from '../workflows/search-attributes';

export async function ensureSearchAttributes(client: Client): Promise<void> {
  const namespace = client.options.namespace;
  const existing = await client.connection.operatorService.listSearchAttributes({ namespace });
  const have = new Set(Object.keys(existing.customAttributes ?? {}));
  const missing = SEARCH_ATTRIBUTES.filter((k) => !have.has(k.name));
  if (missing.length === 0) return;
  const { IndexedValueType } = temporal.api.enums.v1;
  const types: Record<string, temporal.api.enums.v1.IndexedValueType> = {
    [SearchAttributeType.KEYWORD]: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
    [SearchAttributeType.INT]: IndexedValueType.INDEXED_VALUE_TYPE_INT,
  };
  await client.connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(missing.map((k) => [k.name, types[k.type]])),
  });
}
