/** `backfill list`: runs in the ledger, newest first. */
import { Command } from 'commander';
import { listRunSummaries } from '../../operations/status';
import { RunStatus } from '../../domain/statuses';
import { databaseOption, outputOption } from '../options';
import { emit, UsageError, type OutputOptions } from '../output';
import { renderRunList } from '../render/run-list';
import { withBackfill, withLedger } from '../with-backfill';
import Table from 'cli-table3';
import { listFleets } from '../../fleet/fleet-status';
import { plainStyle } from '../render/status';
import { runListLink, withLinks } from '../web-ui-links';

async function list(opts: OutputOptions & { database: string; status?: string; name?: string; fleets?: boolean }): Promise<void> {
  if (opts.fleets) return listTheFleets(opts);
  if (opts.status && !(Object.values(RunStatus) as string[]).includes(opts.status)) {
    throw new UsageError(`--status must be one of ${Object.values(RunStatus).join(', ')} (got "${opts.status}")`);
  }
  const filter = { status: opts.status, name: opts.name };
  await withLedger(opts.database, async ({ pool }) =>
    emit(opts, withLinks(await listRunSummaries(pool, filter)), (list) => renderRunList(list, runListLink(filter))),
  );
}

/** Fleets span ledgers: Temporal lists them (within its retention); each member's ledger keeps its fleet for good. */
async function listTheFleets(opts: OutputOptions & { name?: string; status?: string }): Promise<void> {
  if (opts.status) throw new UsageError('--status filters runs of a ledger; list fleets without it');
  await withBackfill('DATABASE_URL', async (backfill) => {
    const fleets = await listFleets(await backfill.client(), { name: opts.name });
    emit(opts, fleets, (list) => {
      if (list.length === 0) return 'No fleets in this Temporal namespace (within its retention). Start one: backfill start fleet.yaml';
      const table = new Table({ style: plainStyle(), head: ['fleet', 'name', 'status', 'started', 'closed'] });
      for (const f of list)
        table.push([f.fleetId, f.name, f.status, f.startedAt.slice(0, 19).replace('T', ' '), f.closedAt?.slice(0, 19).replace('T', ' ') ?? '']);
      return `${table.toString()}\nA fleet's members: backfill status <fleet>`;
    });
  });
}

export function command(): Command {
  return new Command('list')
    .description('runs in the ledger, newest first')
    .option('--status <status>', 'only runs in this status')
    .option('--name <name>', 'only runs of this spec name')
    .option('--fleets', 'fleets in the Temporal namespace instead (a fleet spans many ledgers)')
    .addOption(databaseOption())
    .addOption(outputOption())
    .action(list);
}
