/** `backfill stale <spec>`: the partitions whose rows were written by another transform version or from an input since changed. */
import Table from 'cli-table3';
import { Command } from 'commander';
import { staleOfSpec } from '../../operations/stale-partitions';
import { emit, type OutputOptions } from '../output';
import { outputOption } from '../options';

async function stale(specFile: string, opts: OutputOptions): Promise<void> {
  emit(opts, await staleOfSpec(specFile), (r) => {
    if (r.stale.length === 0)
      return `No partition of ${r.name} is stale: every partition the ledger shows written was written by transform version ${r.version}, from the inputs it started with.`;
    const table = new Table({ head: ['partition', 'run', 'why'], style: { head: [], border: [] } });
    for (const p of r.stale.slice(0, 200)) table.push([p.partitionId, p.runId, p.reason]);
    return [
      `${r.stale.length} partition(s) of ${r.name} are stale:`,
      table.toString(),
      ...(r.stale.length > 200 ? [`… and ${r.stale.length - 200} more (-o json lists all)`] : []),
      `Re-run just these: backfill start ${specFile} --only-stale`,
    ].join('\n');
  });
}

export function command(): Command {
  return new Command('stale')
    .description(
      "list the partitions written by another transform version than the spec's, or before an accepted input change (re-run them with start --only-stale)",
    )
    .argument('<spec>', 'the spec file (YAML)')
    .addOption(outputOption())
    .action(stale);
}
