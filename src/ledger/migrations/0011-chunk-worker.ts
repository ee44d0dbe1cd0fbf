import type { Migration } from './migration';

/**
 * Which worker process wrote each chunk (its Temporal identity, pid@host unless set): an
 * auditor can tell which host touched which key range, and an operator whether the run's
 * work spreads over its workers. NULL on chunks written before this migration.
 */
export const m0011ChunkWorker: Migration = {
  version: 11,
  name: 'chunk-worker',
  sql: `
ALTER TABLE backfill.chunks ADD COLUMN worker text;
`,
};
