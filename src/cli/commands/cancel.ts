/** `backfill cancel`: partitions stop at a chunk boundary; committed chunks stay. A reason is required. */
import type { Command } from 'commander';
import { applyControl, controlCommand } from '../control-action';
import { reasonOption } from '../options';

export function command(): Command {
  return controlCommand('cancel', 'cancel a run: partitions stop at a chunk boundary; committed chunks stay; its workflow then ends Canceled')
    .addOption(reasonOption().makeOptionMandatory())
    .option('--yes', 'do not ask for confirmation (needed when standard input is not a terminal)')
    .action((run: string, opts) => applyControl('cancel', run, opts));
}
