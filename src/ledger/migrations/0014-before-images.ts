import type { Migration } from './migration';

/**
 * Before-images (docs/undo.md): what each run overwrote, one table per run in its own schema,
 * so dropping a run's images is one DROP TABLE and the ledger's schema keeps a fixed set of
 * tables. A run records its image table (NULL: `undo: off`, or registered before this) and how
 * long its images are kept after it finishes, as the spec said it (`14 days`); the chunk log
 * records each chunk's transaction id, which its images carry (undo/image-statements.ts).
 */
export const m0014BeforeImages: Migration = {
  version: 14,
  name: 'before-images',
  sql: `
CREATE SCHEMA IF NOT EXISTS backfill_undo;
COMMENT ON SCHEMA backfill_undo IS 'backfill: before-images, one table per run (docs/undo.md); dropped by backfill cleanup';
ALTER TABLE backfill.runs ADD COLUMN undo_table text, ADD COLUMN undo_keep text CHECK (undo_keep::interval > interval '0');
-- the chunk's transaction: its images carry it, and the rows it wrote carry it as xmin until changed
ALTER TABLE backfill.chunks ADD COLUMN xid xid8;
`,
};
