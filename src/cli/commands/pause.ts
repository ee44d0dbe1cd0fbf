/** `backfill pause`: chunks in flight commit; no new chunk starts until resume. */
import type { Command } from 'commander';
import { applyControl, controlCommand } from '../control-action';
import { reasonOption } from '../options';

export function command(): Command {
  return controlCommand('pause', 'pause a run: chunks in flight finish, no new chunk starts')
    .addOption(reasonOption())
    .action((run: string, opts) => applyControl('pause', run, opts));
}
