import type { Migration } from './migration';

/**
 * A partition's error in two forms. `last_error` is what may travel through Temporal (the
 * partition's result, the run's failure, the Web UI): the kind of error, the constraint and
 * the chunk's range, never a row value. `error_detail` is PostgreSQL's full message with its
 * detail ("Failing row contains …"): row data, so it stays here, behind the database's access.
 */
export const m0006ErrorDetail: Migration = {
  version: 6,
  name: 'error-detail',
  sql: `ALTER TABLE backfill.partitions ADD COLUMN error_detail text;`,
};
