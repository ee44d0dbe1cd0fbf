/**
 * After-actions (spec `after`): what must happen downstream once a run's gates passed —
 * ANALYZE the target, refresh a materialized view, run a statement, NOTIFY a channel, POST a
 * webhook. In order; each recorded in the ledger (ledger/after-actions.ts) with its outcome, tries and time.
 * A failed action stops the ones after it (they may depend on it) and leaves the run
 * `succeeded` with `downstream: failed`; `backfill after <run>` runs what is left, skipping
 * what already succeeded. Shared by the worker's activity and the CLI.
 */
import type pg from 'pg';
import type { Logger } from 'pino';
import { inTransaction } from '../db/pool';
import { quoteTable } from '../db/sql';
import { recordEvent } from '../ledger/events';
import { getRun, setDownstream } from '../ledger/runs';
import {
  listAfterActions,
  planAfterActions,
  recordAfterActionFailure,
  recordAfterActionSucceeded,
  recordAfterActionTry,
  type AfterActionRow,
} from '../ledger/after-actions';
import { webhookRefusal, type WorkerTrust } from '../security/worker-trust';
import { DEFAULT_STATEMENT_TIMEOUT_SECONDS } from '../domain/limits';
import type { AfterAction } from '../specs/validate-schema';
import { querySingle } from '../db/session';
import { checkAfterSql, loadSqlParser } from '../preflight/spec-sql';
import { runSummary, type RunSummary } from './run-summary';

export interface AfterOutcome {
  downstream: 'succeeded' | 'failed';
  actions: AfterActionRow[];
}

export interface AfterOptions {
  trust: Pick<WorkerTrust, 'webhookUrls'>;
  logger?: Logger;
  actor: string;
  /** Tries per action before it is recorded failed (a refusal is never retried). */
  tries?: number;
  backoffMs?: number;
  /** Called between tries, so an activity can heartbeat. */
  onTry?: () => void;
}

/** A permanent refusal: retrying cannot help. */
export class Refused extends Error {}

export function describeAction(a: AfterAction): string {
  switch (a.action) {
    case 'analyze':
      return 'ANALYZE the target';
    case 'refresh':
      return `REFRESH MATERIALIZED VIEW ${a.view}`;
    case 'sql':
      return `SQL: ${a.sql.replace(/\s+/g, ' ').trim().slice(0, 120)}`;
    case 'notify':
      return `NOTIFY ${a.channel} with the run summary`;
    case 'webhook':
      return `POST the run summary to ${new URL(a.url).origin}${new URL(a.url).pathname}`;
  }
}

export async function runAfterActions(pool: pg.Pool, runId: string, opts: AfterOptions): Promise<AfterOutcome> {
  const run = await getRun(pool, runId);
  if (!run) throw new Refused(`run ${runId} is not in the ledger`);
  if (run.status !== 'succeeded')
    throw new Refused(`run ${runId} is ${run.status}: after-actions run only after every partition succeeded and every gate passed`);
  const actions = run.spec.after ?? [];
  await planAfterActions(
    pool,
    runId,
    actions.map((a) => ({ action: a.action, description: describeAction(a) })),
  );
  await setDownstream(pool, runId, 'pending');
  const summary = await runSummary(pool, run);
  const done = new Set((await listAfterActions(pool, runId)).filter((r) => r.status === 'succeeded').map((r) => r.position));
  const tries = opts.tries ?? 3;
  let failed = false;
  for (const [i, action] of actions.entries()) {
    if (done.has(i)) continue;
    for (let t = 1; t <= tries; t++) {
      opts.onTry?.();
      await recordAfterActionTry(pool, runId, i);
      try {
        await perform(
          pool,
          run.spec.target.table,
          action,
          summary,
          opts,
          (run.spec.limits.statementTimeoutSeconds ?? DEFAULT_STATEMENT_TIMEOUT_SECONDS) * 1000,
        );
        await recordAfterActionSucceeded(pool, runId, i);
        break;
      } catch (err) {
        const message = (err as Error).message;
        opts.logger?.warn({ runId, action: action.action, position: i, try: t, error: message }, 'after-action failed');
        const last = t === tries || err instanceof Refused;
        await recordAfterActionFailure(pool, runId, i, last, message);
        if (last) {
          failed = true;
          break;
        }
        await new Promise((r) => setTimeout(r, (opts.backoffMs ?? 1000) * 2 ** (t - 1)));
      }
    }
    if (failed) break; // later actions may depend on this one
  }
  const downstream = failed ? 'failed' : 'succeeded';
  await setDownstream(pool, runId, downstream);
  const rows = await listAfterActions(pool, runId);
  await recordEvent(pool, {
    runId,
    key: `downstream-${rows.reduce((n, r) => n + r.tries, 0)}`,
    kind: `downstream-${downstream}`,
    actor: opts.actor,
    detail: { actions: rows.map((r) => ({ position: r.position, action: r.action, status: r.status, tries: r.tries })) },
  });
  return { downstream, actions: rows };
}

async function perform(pool: pg.Pool, target: string, action: AfterAction, summary: RunSummary, opts: AfterOptions, timeoutMs: number): Promise<void> {
  switch (action.action) {
    case 'analyze':
      await inTransaction(pool, { statementTimeoutMs: timeoutMs, end: 'commit' }, (c) => c.query(`ANALYZE ${quoteTable(target)}`));
      return;
    case 'refresh': {
      const { rows } = await pool
        .query<{ populated: boolean; unique_index: boolean }>(
          `SELECT m.ispopulated AS populated,
                EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = $1::regclass AND i.indisunique AND i.indpred IS NULL AND i.indexprs IS NULL) AS unique_index
           FROM pg_matviews m WHERE format('%I.%I', m.schemaname, m.matviewname)::regclass = $1::regclass`,
          [quoteTable(action.view)],
        )
        .catch((err: Error) => {
          throw new Refused(`materialized view ${action.view}: ${err.message}`);
        });
      if (rows.length === 0) throw new Refused(`${action.view} is not a materialized view`);
      // CONCURRENTLY keeps the view readable while it refreshes; it needs a unique index and a populated view
      const concurrently = rows[0].populated && rows[0].unique_index ? 'CONCURRENTLY ' : '';
      await inTransaction(pool, { statementTimeoutMs: timeoutMs, end: 'commit' }, (c) =>
        c.query(`REFRESH MATERIALIZED VIEW ${concurrently}${quoteTable(action.view)}`),
      );
      return;
    }
    case 'sql': {
      await loadSqlParser();
      const verdict = checkAfterSql(action.sql);
      if (!verdict.ok) throw new Refused(`after sql ${verdict.message}`);
      await inTransaction(pool, { statementTimeoutMs: timeoutMs, end: 'commit' }, (c) => querySingle(c, action.sql));
      return;
    }
    case 'notify':
      await pool.query('SELECT pg_notify($1, $2)', [action.channel, JSON.stringify(summary)]);
      return;
    case 'webhook': {
      const refusal = webhookRefusal(opts.trust, action.url);
      if (refusal) throw new Refused(refusal);
      const response = await fetch(action.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'backfill' },
        body: JSON.stringify(summary),
        signal: AbortSignal.timeout(15_000),
        redirect: 'error',
      });
      if (!response.ok) throw new Error(`webhook answered ${response.status} ${response.statusText}`);
      return;
    }
  }
}
