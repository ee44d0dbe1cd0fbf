/** `backfill resume`: a paused (or input-change-held) run goes on from its checkpoints. */
import type { Command } from 'commander';
import { applyControl, controlCommand } from '../control-action';
import { reasonOption } from '../options';

export function command(): Command {
  return controlCommand('resume', 'resume a paused run')
    .addOption(reasonOption())
    .option('--accept-input-change', 'go on although a table or function the SQL transform reads changed since the run started (needs --reason)')
    .action((run: string, opts) => applyControl('resume', run, opts));
}
