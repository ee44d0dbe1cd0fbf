/**
 * One fresh database per test file on the shared test server, reachable through an
 * environment variable (specs name variables, never URLs). Dropped in afterAll.
 */
import pg from 'pg';
import { createPool } from '../../src/db/pool';
import { uniqueName } from './unique';

export interface TestDatabase {
  name: string;
  url: string;
  /** The environment variable a spec's `database` field names. */
  envVar: string;
  pool: pg.Pool;
  drop(): Promise<void>;
}

function serverUrl(): string {
  const url = process.env.BACKFILL_TEST_PG_URL;
  if (!url) throw new Error('BACKFILL_TEST_PG_URL is not set: run the tests through jest (globalSetup starts PostgreSQL)');
  return url;
}

export async function createTestDatabase(label: string): Promise<TestDatabase> {
  const name = uniqueName(`bf_${label}`);
  const admin = new pg.Client({ connectionString: serverUrl() });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(serverUrl());
  url.pathname = `/${name}`;
  const envVar = `BF_TEST_DB_${label.replace(/[^a-z0-9]/gi, '_').toUpperCase()}`;
  process.env[envVar] = url.toString();
  const pool = createPool(url.toString(), { max: 8, applicationName: 'backfill-test' });
  return {
    name,
    url: url.toString(),
    envVar,
    pool,
    async drop() {
      await pool.end();
      const a = new pg.Client({ connectionString: serverUrl() });
      await a.connect();
      await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await a.end();
    },
  };
}
