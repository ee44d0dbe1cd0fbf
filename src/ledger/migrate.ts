/**
 * Applies the ledger migrations. Safe when several workers start at once: one
 * transaction holds an advisory lock while it creates the schema and applies what is
 * missing; the others wait on the lock and then find nothing to do.
 */
import type pg from 'pg';
import { withTransaction } from '../db/pool';
import { MIGRATIONS } from './migrations';

const MIGRATION_LOCK = 'backfill.ledger.migrations';

/** Pools already migrated by this process; migrating is idempotent, this only saves round trips. */
const migrated = new WeakSet<pg.Pool>();

export async function migrateLedger(pool: pg.Pool): Promise<number[]> {
  if (migrated.has(pool)) return [];
  const applied = await withTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [MIGRATION_LOCK]);
    await client.query('CREATE SCHEMA IF NOT EXISTS backfill');
    await client.query(`CREATE TABLE IF NOT EXISTS backfill.schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const { rows } = await client.query<{ version: number }>('SELECT version FROM backfill.schema_migrations');
    const done = new Set(rows.map((r) => r.version));
    const now: number[] = [];
    for (const m of MIGRATIONS) {
      if (done.has(m.version)) continue;
      await client.query(m.sql);
      await client.query('INSERT INTO backfill.schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      now.push(m.version);
    }
    return now;
  });
  migrated.add(pool);
  return applied;
}
