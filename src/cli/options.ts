/** The options several commands share, spelled once so every command says them the same way. */
import { Option } from 'commander';
import type { OutputOptions } from './output';

/** Refused before the command acts: cancel must not cancel, then fail to print. */
export const outputOption = () =>
  new Option('-o, --output <format>', 'text, json (one document) or jsonl (JSON lines; watch streams one per update)')
    .choices(['text', 'json', 'jsonl'])
    .default('text');

export const databaseOption = () => new Option('--database <ENV>', 'name of the environment variable holding the ledger database URL').default('DATABASE_URL');

export const memberOption = () => new Option('--member <NAME>', 'a fleet: only this member (its variable), as the run it is');

export const actorOption = (who = 'who does it') => new Option('--actor <name>', `${who}, for the audit record (default: OS user)`);

export const reasonOption = () => new Option('--reason <text>', 'why; kept in the audit record');

/** What a command acting on a run takes: its ledger, the output format, who and why. */
export type ActorOptions = OutputOptions & { database: string; actor?: string; reason?: string };
