/**
 * Reads the health signals the spec's guards name, on a connection of the target
 * database, before every chunk and outside its transaction. Guard SQL may have arrived
 * through Temporal (a setLimits update) from anyone with access to the namespace, so the
 * worker parses it again before running it, and every reading runs read-only, under a
 * statement_timeout, over the extended protocol, in a transaction that is rolled back.
 */
import { ApplicationFailure } from '@temporalio/common';
import type pg from 'pg';
import { withClient } from '../db/pool';
import { writeCommitProbe } from '../ledger/commit-probes';
import { quoteTable } from '../db/sql';
import { FailureType } from '../domain/failures';
import { levelOf, type GuardReading, type GuardsSpec, type Threshold } from '../domain/guards';
import { inReadOnlyCheck, querySingle } from '../db/session';
import { checkGuardSql, guardSql, loadSqlParser } from './spec-sql';

/** Guard SQL texts this worker has parsed and found to be one read-only SELECT. */
const acceptedGuardSql = new Set<string>();

async function refuseUnsafeGuards(guards: GuardsSpec): Promise<void> {
  for (const [path, sql] of guardSql(guards)) {
    if (acceptedGuardSql.has(sql)) continue;
    await loadSqlParser();
    const verdict = checkGuardSql(sql);
    if (!verdict.ok) {
      throw ApplicationFailure.nonRetryable(
        `${path} ${verdict.message}; this worker will not run it (fix it with backfill set-limits)`,
        FailureType.SpecInvalid,
      );
    }
    acceptedGuardSql.add(sql);
  }
}

export async function readGuards(pool: pg.Pool, guards: GuardsSpec, targetTable: string): Promise<GuardReading[]> {
  await refuseUnsafeGuards(guards);
  // a probe measures the database as the application sees it: a few ms of timeout would distort nothing
  const readings = await inReadOnlyCheck(pool, (client) => readGuardsWith(client, guards, targetTable), 30_000);
  if (guards.commitMs) readings.unshift(reading('commitMs', await timeCommit(pool), guards.commitMs));
  return readings;
}

/**
 * One durable one-row commit, timed: the engine's own write to its ledger (never spec SQL),
 * under the session's synchronous_commit (a chunk's SET LOCAL ended with it), so it waits for
 * the WAL flush — and synchronous replicas — as the application's commits do. Read-only guard
 * SQL cannot see this: a primary-key read stays fast while commits queue behind the backfill.
 */
function timeCommit(pool: pg.Pool): Promise<number> {
  return withClient(pool, async (client) => {
    const started = process.hrtime.bigint();
    await writeCommitProbe(client);
    return Number(process.hrtime.bigint() - started) / 1e6;
  });
}

function reading(guard: string, value: number, t: Threshold): GuardReading {
  const level = levelOf(value, t);
  return { guard, value, level, threshold: level === 'hard' ? t.hard : level === 'soft' ? t.soft : undefined };
}

async function readGuardsWith(db: pg.PoolClient, guards: GuardsSpec, targetTable: string): Promise<GuardReading[]> {
  const readings: GuardReading[] = [];
  const add = (guard: string, value: number, t: Threshold) => readings.push(reading(guard, value, t));
  const one = async (sql: string, values: unknown[] = []) => Number((await querySingle(db, sql, values)).rows[0]?.v ?? 0);
  const target = quoteTable(targetTable);

  if (guards.replicationLagSeconds) {
    // replay_lag keeps its last measurement for a while after a replica has caught up: a replica
    // that has replayed everything written so far lags by 0, whatever the stale value says
    add(
      'replicationLagSeconds',
      await one(
        `SELECT coalesce(max(CASE WHEN replay_lsn >= pg_current_wal_lsn() THEN 0 ELSE extract(epoch FROM replay_lag) END), 0) AS v
           FROM pg_stat_replication`,
      ),
      guards.replicationLagSeconds,
    );
  }
  if (guards.activeConnectionsRatio) {
    add(
      'activeConnectionsRatio',
      await one("SELECT count(*)::float8 / current_setting('max_connections')::float8 AS v FROM pg_stat_activity WHERE backend_type = 'client backend'"),
      guards.activeConnectionsRatio,
    );
  }
  if (guards.lockWaits) {
    // other sessions waiting for a lock on the target, or holding one that blocks row writes (the
    // modes that conflict with ROW EXCLUSIVE; a vacuum's SHARE UPDATE EXCLUSIVE does not, it has
    // its own guard): a chunk started now would queue behind them, or make them queue behind it
    add(
      'lockWaits',
      await one(
        `SELECT count(DISTINCT l.pid) AS v FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
          WHERE l.relation = $1::regclass AND l.pid <> pg_backend_pid() AND a.application_name <> 'backfill'
            AND (NOT l.granted OR l.mode IN ('ShareLock', 'ShareRowExclusiveLock', 'ExclusiveLock', 'AccessExclusiveLock'))`,
        [target],
      ),
      guards.lockWaits,
    );
  }
  if (guards.autovacuum) {
    add('autovacuum', await one('SELECT count(*) AS v FROM pg_stat_progress_vacuum WHERE relid = $1::regclass', [target]), guards.autovacuum);
  }
  if (guards.probeMs) {
    const started = process.hrtime.bigint();
    await querySingle(db, guards.probeMs.sql);
    add('probeMs', Number(process.hrtime.bigint() - started) / 1e6, guards.probeMs);
  }
  for (const custom of guards.custom ?? []) {
    add(custom.name, await one(`SELECT (${custom.sql}\n) AS v`), custom);
  }
  return readings;
}
