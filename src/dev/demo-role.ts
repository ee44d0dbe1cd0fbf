/**
 * The demo's least-privilege role: the set-up docs/security.md recommends, made in the demo's
 * own embedded PostgreSQL so that its first run connects as a role with only the grants a
 * backfill needs (and plan shows no superuser warning). The role and its ledger grants come first
 * (the ledger is migrated by its owner, as `backfill migrate` would), so that the demo's worker can
 * start while the data is made; the grants on the demo's tables once they exist. Idempotent.
 */
import type pg from 'pg';
import { migrateLedger } from '../ledger/migrate';

export const DEMO_ROLE = 'backfill_demo';
const DEMO_PASSWORD = 'backfill-demo';

/** Creates (or refreshes) the role and returns `ownerUrl` with the role as its user. */
export async function ensureDemoRole(owner: pg.Pool, ownerUrl: string): Promise<string> {
  await migrateLedger(owner);
  const { rows } = await owner.query<{ db: string }>('SELECT current_database() AS db');
  await owner.query(`
    DO $$ BEGIN
      IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${DEMO_ROLE}') THEN CREATE ROLE ${DEMO_ROLE} LOGIN; END IF;
    END $$;
    ALTER ROLE ${DEMO_ROLE} LOGIN PASSWORD '${DEMO_PASSWORD}' NOSUPERUSER NOBYPASSRLS;

    -- the ledger: read and update its own records, never its structure
    GRANT USAGE ON SCHEMA backfill TO ${DEMO_ROLE};
    GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA backfill TO ${DEMO_ROLE};
    GRANT USAGE ON ALL SEQUENCES IN SCHEMA backfill TO ${DEMO_ROLE};
    GRANT DELETE ON backfill.rate_limits TO ${DEMO_ROLE};
    GRANT USAGE, CREATE ON SCHEMA backfill_undo TO ${DEMO_ROLE};

    -- a session-private table holds each chunk's output
    GRANT TEMPORARY ON DATABASE "${rows[0].db.replace(/"/g, '""')}" TO ${DEMO_ROLE};
  `);
  const url = new URL(ownerUrl);
  url.username = DEMO_ROLE;
  url.password = DEMO_PASSWORD;
  return url.toString();
}

/** The demo spec's source and what its transform joins: read only; its target: read and write. */
export async function grantDemoTables(owner: pg.Pool): Promise<void> {
  await owner.query(`
    GRANT USAGE ON SCHEMA demo TO ${DEMO_ROLE};
    GRANT SELECT ON demo.orders, demo.fx_rates TO ${DEMO_ROLE};
    GRANT SELECT, INSERT, UPDATE ON demo.orders_usd TO ${DEMO_ROLE};
  `);
}
