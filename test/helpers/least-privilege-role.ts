/**
 * The least-privilege role docs/security.md documents, made by its GRANT statements as written
 * there (names substituted) on a test database whose ledger the owner has migrated.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { migrateLedger } from '../../src/ledger/migrate';
import type { TestDatabase } from './db';

/** The SQL block between the grants markers of docs/security.md, with the given names. */
export function documentedGrants(role: string, database: string, password: string): string {
  const doc = readFileSync(path.join(__dirname, '..', '..', 'docs', 'security.md'), 'utf8');
  const block = /<!-- grants:begin -->\s*```sql\n([\s\S]*?)```\s*<!-- grants:end -->/.exec(doc);
  if (!block) throw new Error('docs/security.md has no grants block');
  return block[1].replaceAll('backfill_runner', role).replaceAll('appdb', database).replace("'change-me'", `'${password}'`);
}

/** Migrates the ledger as its owner, creates the role, and returns the role's connection URL. */
export async function createRunnerRole(db: TestDatabase, role: string, password = 'runner-pw'): Promise<string> {
  await migrateLedger(db.pool);
  await db.pool.query(documentedGrants(role, db.name, password));
  const url = new URL(db.url);
  url.username = role;
  url.password = password;
  return url.toString();
}

/** A role that holds privileges cannot be dropped while its database exists: call after the database is gone. */
export async function dropRunnerRole(role: string): Promise<void> {
  const admin = new pg.Client({ connectionString: process.env.BACKFILL_TEST_PG_URL });
  await admin.connect();
  await admin.query(`DROP OWNED BY ${role}`).catch(() => undefined);
  await admin.query(`DROP ROLE IF EXISTS ${role}`);
  await admin.end();
}
