/**
 * Applies the ledger migrations. Safe when several workers start at once: one
 * transaction holds an advisory lock while it creates the schema and applies what is
 * missing; the others wait on the lock and then find nothing to do.
 */
import type pg from 'pg';
import { withTransaction } from '../db/pool';
import { PARTITION_TRANSITIONS, RUN_TRANSITIONS } from '../domain/statuses';
import { MIGRATIONS } from './migrations';

const MIGRATION_LOCK = 'backfill.ledger.migrations';

/** Pools already migrated by this process; migrating is idempotent, this only saves round trips. */
const migrated = new WeakSet<pg.Pool>();

export async function migrateLedger(pool: pg.Pool): Promise<number[]> {
  if (migrated.has(pool)) return [];
  // a least-privilege role (docs/security.md) may read the ledger but not create in it: when
  // nothing is missing, nothing is attempted
  if (await ledgerCurrent(pool)) {
    migrated.add(pool);
    return [];
  }
  let applied: number[];
  try {
    applied = await applyMigrations(pool);
  } catch (err) {
    if ((err as { code?: string }).code === '42501') {
      throw new Error(
        `the backfill ledger in this database needs migrating, which this role may not do (${(err as Error).message}); ` +
          "run `backfill migrate --database <VAR>` once as the ledger's owner (docs/security.md)",
        { cause: err },
      );
    }
    throw err;
  }
  migrated.add(pool);
  return applied;
}

/** Every migration applied and the transition table equal to the code's: reads only. */
async function ledgerCurrent(pool: pg.Pool): Promise<boolean> {
  const { rows } = await pool.query<{ t: string | null }>("SELECT to_regclass('backfill.status_transitions')::text AS t");
  if (!rows[0].t) return false;
  const versions = await pool.query<{ version: number }>('SELECT version FROM backfill.schema_migrations');
  const done = new Set(versions.rows.map((r) => r.version));
  if (!MIGRATIONS.every((m) => done.has(m.version))) return false;
  const { rows: arrows } = await pool.query<{ a: string }>("SELECT entity || ':' || from_status || '>' || to_status AS a FROM backfill.status_transitions");
  const have = new Set(arrows.map((r) => r.a));
  const want = transitionArrows().map(([entity, from, to]) => `${entity}:${from}>${to}`);
  return have.size === want.length && want.every((a) => have.has(a));
}

async function applyMigrations(pool: pg.Pool): Promise<number[]> {
  return withTransaction(pool, async (client) => {
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
    await syncStatusTransitions(client);
    return now;
  });
}

function transitionArrows(): string[][] {
  return [
    ...Object.entries(RUN_TRANSITIONS).flatMap(([from, tos]) => tos.map((to) => ['run', from, to])),
    ...Object.entries(PARTITION_TRANSITIONS).flatMap(([from, tos]) => tos.map((to) => ['partition', from, to])),
  ];
}

/** The database's copy of the transition tables (see migration 0005), made equal to the code's. */
async function syncStatusTransitions(client: pg.PoolClient): Promise<void> {
  const arrows = transitionArrows();
  await client.query(
    `WITH wanted AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) AS w(entity, from_status, to_status)),
          gone AS (DELETE FROM backfill.status_transitions t
                    WHERE NOT EXISTS (SELECT 1 FROM wanted w WHERE (w.entity, w.from_status, w.to_status) = (t.entity, t.from_status, t.to_status)))
     INSERT INTO backfill.status_transitions SELECT * FROM wanted ON CONFLICT DO NOTHING`,
    [arrows.map((a) => a[0]), arrows.map((a) => a[1]), arrows.map((a) => a[2])],
  );
}
