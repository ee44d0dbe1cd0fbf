/**
 * The orders fixture: sparse ids, skewed days, NULL amounts and currencies, voided rows
 * the spec filters out. `expectedSql` is the one SQL statement a backfill must match.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import { stringify } from 'yaml';
import type { SpecInput } from '../../src/specs/schema';
import { uniqueName } from './unique';

export const TRANSFORM_SQL =
  'SELECT c.id, c.tenant, c.created_at, round(c.amount_cents * f.usd_rate / 100.0, 2) AS amount_usd\n' + 'FROM chunk c LEFT JOIN app.fx f USING (currency)';

export const WHERE = "status <> 'void'";

export async function createOrders(pool: pg.Pool, rows: number): Promise<void> {
  await pool.query(`
    CREATE SCHEMA app;
    CREATE TABLE app.fx (currency text PRIMARY KEY, usd_rate numeric(12,6) NOT NULL);
    INSERT INTO app.fx VALUES ('USD', 1), ('EUR', 1.0832), ('GBP', 1.265), ('JPY', 0.006712);
    CREATE TABLE app.orders (
      id bigint PRIMARY KEY, created_at timestamptz NOT NULL, tenant integer NOT NULL,
      currency text, amount_cents bigint, status text NOT NULL);
    INSERT INTO app.orders
    SELECT n * 3 + n % 3,
           timestamptz '2024-03-01' + (20 * sqrt(((n * 2654435761) % 1000003) / 1000003.0)) * interval '1 day',
           1 + (n * 7) % 12,
           CASE WHEN n % 97 = 0 THEN NULL ELSE (ARRAY['USD','EUR','GBP','JPY','CHF'])[1 + n % 5] END,
           CASE WHEN n % 41 = 0 THEN NULL ELSE 100 + (n * 48271) % 900000 END,
           CASE WHEN n % 29 = 0 THEN 'void' ELSE 'paid' END
      FROM generate_series(1::bigint, ${rows}) AS n;
    CREATE INDEX ON app.orders (created_at);
    CREATE INDEX ON app.orders (tenant);
    CREATE TABLE app.orders_usd (id bigint PRIMARY KEY, tenant integer, created_at timestamptz, amount_usd numeric(14,2));
    ANALYZE app.orders;
  `);
}

/** The reference: what one SQL statement over the whole source produces. */
export const EXPECTED_SQL = `SELECT c.id, c.tenant, c.created_at, round(c.amount_cents * f.usd_rate / 100.0, 2)::numeric(14,2) AS amount_usd
  FROM app.orders c LEFT JOIN app.fx f USING (currency) WHERE ${WHERE}`;

/** Rows of the target and the reference (within `scope`) found in one and not the other, both ways; 0 and 0 means identical. */
export async function diffAgainstExpected(
  pool: pg.Pool,
  scope = 'true',
): Promise<{ missing: number; extra: number; targetRows: number; expectedRows: number }> {
  const { rows } = await pool.query<{ missing: string; extra: string; t: string; e: string }>(`
    WITH e AS (SELECT * FROM (${EXPECTED_SQL}) x WHERE ${scope}),
         t AS (SELECT id, tenant, created_at, amount_usd FROM app.orders_usd WHERE ${scope})
    SELECT (SELECT count(*) FROM (SELECT * FROM e EXCEPT ALL SELECT * FROM t) x) AS missing,
           (SELECT count(*) FROM (SELECT * FROM t EXCEPT ALL SELECT * FROM e) x) AS extra,
           (SELECT count(*) FROM t) AS t,
           (SELECT count(*) FROM e) AS e`);
  return { missing: Number(rows[0].missing), extra: Number(rows[0].extra), targetRows: Number(rows[0].t), expectedRows: Number(rows[0].e) };
}

export function ordersSpec(envVar: string, overrides: Partial<SpecInput> = {}): SpecInput {
  return {
    name: 'orders-usd',
    reason: 'test: recompute amount_usd',
    database: envVar,
    source: { table: 'app.orders', key: 'id', where: WHERE },
    partition: { by: 'range', column: 'id', size: 200000 },
    transform: { name: 'orders-usd', version: 1, sql: TRANSFORM_SQL },
    target: { table: 'app.orders_usd', key: ['id'], mode: 'upsert' },
    limits: { chunkSize: 10000, concurrency: 4 },
    ...overrides,
  };
}

let specDir: string | undefined;

export function writeSpec(spec: unknown, name = 'spec'): string {
  specDir ??= mkdtempSync(path.join(os.tmpdir(), 'backfill-specs-'));
  const file = path.join(specDir, `${uniqueName(name, '-')}.yaml`);
  writeFileSync(file, typeof spec === 'string' ? spec : stringify(spec));
  return file;
}

/** A TypeScript transform module's source, written beside the specs (a directory workers trust); returns its path. */
export function writeModule(label: string, source: string): string {
  const file = path.join(path.dirname(writeSpec('x: 1')), `${uniqueName(label, '-')}.ts`);
  writeFileSync(file, source);
  return file;
}

/**
 * TRANSFORM_SQL as a TypeScript transform module, written to a fresh file (returned): exact
 * decimal arithmetic, rates in millionths, rounded half away from zero like PostgreSQL's round().
 */
export function writeOrdersUsdModule(version: number): string {
  return writeModule(
    'orders-usd',
    `const RATES: Record<string, bigint> = { USD: 1000000n, EUR: 1083200n, GBP: 1265000n, JPY: 6712n };
    interface Order { id: string; tenant: number; created_at: string; currency: string | null; amount_cents: string | null }
    export default {
      columns: ['id', 'tenant', 'created_at', 'amount_usd'],
      reads: ['id', 'tenant', 'created_at', 'currency', 'amount_cents'],
      version: ${version},
      transform(rows: Order[]) {
        return rows.map((r) => {
          const rate = r.currency === null ? undefined : RATES[r.currency];
          let amount: string | null = null;
          if (rate !== undefined && r.amount_cents !== null) {
            const cents = (BigInt(r.amount_cents) * rate + 500000n) / 1000000n;
            amount = (cents / 100n).toString() + '.' + (cents % 100n).toString().padStart(2, '0');
          }
          return { id: r.id, tenant: r.tenant, created_at: r.created_at, amount_usd: amount };
        });
      },
    };\n`,
  );
}
