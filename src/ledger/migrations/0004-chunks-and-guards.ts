import type { Migration } from './migration';

/**
 * Every committed chunk, with the decision that shaped it: the audit of which key range
 * was written when, how large the chunk was and what governed its pace. Written in the
 * chunk's own transaction, so it exists exactly when the chunk does.
 */
export const m0004ChunksAndGuards: Migration = {
  version: 4,
  name: 'chunks-and-guards',
  sql: `
CREATE TABLE backfill.chunks (
  run_id          text NOT NULL,
  partition_id    text NOT NULL,
  seq             integer NOT NULL,
  key_from        text,            -- exclusive; NULL for the partition's first chunk
  key_to          text,            -- inclusive
  rows_read       bigint NOT NULL,
  rows_written    bigint NOT NULL,
  rows_unchanged  bigint NOT NULL,
  chunk_size      integer NOT NULL,
  duration_ms     integer NOT NULL,
  wait_ms         integer NOT NULL,
  governed_by     text NOT NULL,   -- chunkSize | targetChunkSeconds | rowsPerSecond | guard:<name>
  guard_value     double precision,
  committed_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, partition_id, seq),
  FOREIGN KEY (run_id, partition_id) REFERENCES backfill.partitions (run_id, partition_id) ON DELETE CASCADE
);
-- why a running partition is not writing right now (held by a guard, outside the window); NULL when it is
ALTER TABLE backfill.partitions ADD COLUMN hold_reason text;
`,
};
