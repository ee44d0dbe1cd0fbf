import type { Migration } from './migration';

/**
 * A run of part of the plan on purpose (docs/operating.md "Run part of the plan"): `start --partition`,
 * `--from/--to`, `--only-stale`. The run keeps what was asked and which of the plan's partitions
 * it holds, each with its place in the plan, so its proof of completeness covers exactly them and
 * its status and report say "subset of …".
 */
export const m0017Subsets: Migration = {
  version: 17,
  name: 'subsets',
  sql: `
-- { "asked": { "from": "…", "to": "…" } | { "partitions": [...] } | { "onlyStale": true },
--   "partitions": [{ "id": "…", "planOrdinal": 3 }], "ofPlanned": 40, "lastBoundedPlace": 39, "covers": { "from", "to" } }
ALTER TABLE backfill.runs ADD COLUMN subset jsonb;
`,
};
