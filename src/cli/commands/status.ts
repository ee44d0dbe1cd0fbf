/** `backfill status`: the ledger's view of one run (or, with --all, of recent runs). */
import { Command } from 'commander';
import { endedWorkflow } from '../../operations/control';
import { listRunSummaries, statusReport } from '../../operations/status';
import type { RunRow } from '../../ledger/runs';
import { ACTIVE_RUN_STATUSES } from '../../shared/statuses';
import { connectClient } from '../../temporal/connect';
import { temporalConfig } from '../../temporal/config';
import { databaseOption, outputOption } from '../options';
import { emit, UsageError, type OutputOptions } from '../output';
import { renderRunList } from '../render/run-list';
import { renderStatus } from '../render/status';
import { withLedger } from '../session';
import { runLink, runListLink, withLinks } from '../web-ui-links';

async function status(ref: string | undefined, opts: OutputOptions & { database: string; all?: boolean }): Promise<void> {
  if (!ref && !opts.all) throw new UsageError('name a run (backfill status <run>) or list runs with: backfill list');
  await withLedger(opts.database, async ({ pool, findRun }) => {
    if (opts.all || !ref) return emit(opts, withLinks(await listRunSummaries(pool)), (list) => renderRunList(list, runListLink()));
    const run = await findRun(ref);
    const report = { ...(await statusReport(pool, run)), webUi: runLink(run.workflow_id) };
    const ended = ACTIVE_RUN_STATUSES.includes(run.status) ? await askTemporalIfEnded(run) : undefined;
    emit(opts, ended ? { ...report, workflowEnded: ended } : report, renderStatus);
  });
}

/**
 * An active run whose workflow has ended is stuck for good, and the ledger cannot know it: ask
 * Temporal, briefly. Unreachable, it is left out: status is the ledger's view.
 */
async function askTemporalIfEnded(run: RunRow): Promise<{ status: string; why: string } | undefined> {
  const connected = await connectClient(temporalConfig(), { connectTimeout: '2s' }).catch(() => undefined);
  if (!connected) return undefined;
  try {
    return await endedWorkflow(connected.client, run);
  } finally {
    await connected.close();
  }
}

export function command(): Command {
  return new Command('status')
    .description("a run's partitions, rows, failures and recent events, from the ledger")
    .argument('[run]', 'run id or workflow id (omit with --all)')
    .option('--all', 'list recent runs')
    .addOption(databaseOption())
    .addOption(outputOption())
    .action(status);
}
