import type { Migration } from './migration';

/**
 * The commitMs guard's own write: one row per database session (its backend pid), updated by
 * a durable one-row commit whose time is the reading. Keyed by session so that concurrent
 * probes never wait for each other's row lock; bounded by max_connections.
 */
export const m0012CommitProbes: Migration = {
  version: 12,
  name: 'commit-probes',
  sql: `
CREATE TABLE backfill.commit_probes (backend_pid integer PRIMARY KEY, at timestamptz NOT NULL);
`,
};
