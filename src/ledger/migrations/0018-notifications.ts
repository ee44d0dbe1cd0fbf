import type { Migration } from './migration';

/**
 * Notifications (docs/operating.md "Told when a run needs you"): one row per moment of a run and target,
 * with how its delivery went — so `status` and the report say who was told what, and a moment is
 * sent at most once per target whatever the retries (its key is the receiver's idempotency key).
 */
export const m0018Notifications: Migration = {
  version: 18,
  name: 'notifications',
  sql: `
CREATE TABLE backfill.notifications (
  run_id        text NOT NULL REFERENCES backfill.runs (run_id) ON DELETE CASCADE,
  -- the moment: <kind> or <kind>:<partition or attempt>, the same for every target
  event_key     text NOT NULL,
  kind          text NOT NULL,
  -- "webhook https://hooks.example.com" or "channel backfill_events": never a URL's path (it may hold a token)
  target        text NOT NULL,
  status        text NOT NULL CHECK (status IN ('pending', 'delivered', 'failing', 'refused')),
  attempts      integer NOT NULL DEFAULT 0,
  last_error    text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  delivered_at  timestamptz,
  PRIMARY KEY (run_id, event_key, target)
);
`,
};
