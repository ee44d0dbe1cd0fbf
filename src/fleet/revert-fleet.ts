/**
 * `revert` of a fleet: every member's run undone exactly as `revert` undoes one run (docs/undo.md)
 * — from its before-images, in its own database, row by row where nobody changed the row since,
 * the rest its own conflicts. Every member is checked before any revert starts: one member that
 * cannot be reverted (no images, past its window, its target busy) refuses the whole fleet's,
 * naming it; members that never ran are skipped.
 */
import type { Client } from '@temporalio/client';
import type pg from 'pg';
import { UsageError } from '../domain/usage-error';
import { createPool, databaseUrlFrom } from '../db/pool';
import { revertable } from '../ledger/reverts';
import { getRun, ledgerExists, type RunRow } from '../ledger/runs';
import { waitForResult } from '../operations/run-workflow';
import { statusReportFor } from '../operations/status';
import type { StartedRun } from '../operations/start-run';
import { revertRun } from '../undo/revert-run';
import { inParallel } from '../util/in-parallel';
import type { RunResult } from '../workflows/run/input';
import { fleetProgressQuery } from '../workflows/fleet/messages';
import { findFleet } from './fleet-status';

export interface FleetRevertOptions {
  reason: string;
  actor: string;
  /** Asked once every member is known to be revertable, before anything starts; throw to stop. */
  confirm?: (what: { members: { variable: string; partitions: number }[] }) => Promise<void>;
}

export interface MemberRevert {
  variable: string;
  reverts: string;
  revertRunId: string;
  partitions: number;
}

export interface FleetRevertStarted {
  fleetId: string;
  members: MemberRevert[];
  /** Resolves when every member's revert has ended: its result and its conflicts (rows changed since, left alone). */
  results(): Promise<(MemberRevert & { result: RunResult; conflicts: number })[]>;
}

export async function revertFleet(
  temporal: { client: Client; taskQueue: string },
  ref: string,
  options: FleetRevertOptions,
  env: Record<string, string | undefined> = process.env,
): Promise<FleetRevertStarted> {
  if (!options.reason.trim()) throw new UsageError('--reason is required: why this fleet is undone is kept in the audit record of every member');
  const handle = await findFleet(temporal.client, ref);
  if ((await handle.describe()).status.name === 'RUNNING')
    throw new UsageError(`fleet ${ref} is running; revert applies to a finished fleet (cancel it first)`);
  const { state, record } = await handle.query(fleetProgressQuery);
  const ran = state.members.filter((m) => m.status !== 'waiting' && m.status !== 'not-started');
  const pools = new Map<string, pg.Pool>();
  try {
    for (const m of ran) pools.set(m.variable, createPool(databaseUrlFrom(m.variable, env), { max: 2, applicationName: 'backfill-cli' }));
    const checked = await inParallel(ran, 4, async (m) => {
      const pool = pools.get(m.variable)!;
      const run = (await ledgerExists(pool)) ? await getRun(pool, m.runId) : undefined;
      if (!run) return { variable: m.variable, skip: true as const };
      const can = await revertable(pool, run.run_id);
      return can.ok ? { variable: m.variable, run, partitions: can.partitions.length } : { variable: m.variable, refusal: can.refusal };
    });
    const refused = checked.filter((c) => 'refusal' in c);
    if (refused.length > 0)
      throw new UsageError(
        [
          `fleet ${record.fleetId} cannot be reverted; nothing was started:`,
          ...refused.map((c) => `  ${c.variable}: ${(c as { refusal: string }).refusal}`),
        ].join('\n'),
      );
    const todo = checked.filter((c): c is { variable: string; run: RunRow; partitions: number } => 'run' in c);
    if (todo.length === 0) throw new UsageError(`fleet ${record.fleetId}: no member registered a run; there is nothing to revert`);
    await options.confirm?.({ members: todo.map((t) => ({ variable: t.variable, partitions: t.partitions })) });
    const started = await inParallel(todo, 4, async (t) => ({
      t,
      s: await revertRun({ client: temporal.client, pool: pools.get(t.variable)!, taskQueue: temporal.taskQueue }, t.run, {
        reason: `fleet ${record.fleetId}: ${options.reason}`,
        actor: options.actor,
      }),
    }));
    const members = started.map(({ t, s }) => ({ variable: t.variable, reverts: t.run.run_id, revertRunId: s.runId, partitions: s.partitions }));
    return { fleetId: record.fleetId, members, results: () => results(started, env) };
  } finally {
    await Promise.all([...pools.values()].map((p) => p.end()));
  }
}

async function results(started: { t: { variable: string; run: RunRow }; s: StartedRun }[], env: Record<string, string | undefined>) {
  return Promise.all(
    started.map(async ({ t, s }) => {
      const result = await waitForResult(s.handle);
      const pool = createPool(databaseUrlFrom(t.variable, env), { max: 1, applicationName: 'backfill-cli' });
      try {
        const conflicts = (await statusReportFor(pool, s.runId)).revert?.conflicts.total ?? 0;
        return { variable: t.variable, reverts: t.run.run_id, revertRunId: s.runId, partitions: s.partitions, result, conflicts };
      } finally {
        await pool.end();
      }
    }),
  );
}
