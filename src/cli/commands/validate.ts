/**
 * `backfill validate`: specs checked without a database, saying what only `plan` can check.
 * Several files at once (a repository of specs in CI): each is reported, and the exit code is 2
 * if any is invalid.
 */
import { Command } from 'commander';
import { validateSpecOffline, type OfflineVerdict } from '../../operations/validate-spec';
import { shortHash } from '../../domain/labels';
import { SpecError, type SpecProblem } from '../../specs/errors';
import { outputOption } from '../options';
import { emit, ExitCode, format, type OutputOptions } from '../output';

type Outcome = ({ valid: true } & OfflineVerdict) | { valid: false; file: string; problems: SpecProblem[] };

async function validate(files: string[], opts: OutputOptions): Promise<void> {
  const outcomes: Outcome[] = [];
  for (const file of files) {
    try {
      outcomes.push({ valid: true, ...(await validateSpecOffline(file)) });
    } catch (err) {
      if (!(err instanceof SpecError)) throw err;
      process.stderr.write(`backfill: ${err.message}\n`);
      outcomes.push({ valid: false, file, problems: err.problems });
    }
  }
  if (format(opts) === 'jsonl') for (const o of outcomes) emit(opts, o, () => '');
  else if (files.length === 1 && format(opts) === 'json') emit(opts, outcomes[0], () => '');
  else
    emit(opts, outcomes, (all) =>
      all
        .filter((o): o is Extract<Outcome, { valid: true }> => o.valid)
        .map(render)
        .join('\n'),
    );
  if (outcomes.some((o) => !o.valid)) process.exitCode = ExitCode.Usage;
}

function render(v: OfflineVerdict): string {
  return [
    `Spec ${v.file} is valid offline: ${v.name} (transform ${v.transform.name} v${v.transform.version}, spec hash ${shortHash(v.specHash)})`,
    '  checked:',
    ...v.checked.map((c) => `    ${c}`),
    ...(v.reads?.tables.length ? [`  the transform also reads: ${v.reads.tables.join(', ')}`] : []),
    ...(v.reads?.functions.length ? [`  and calls: ${v.reads.functions.map((f) => `${f}()`).join(', ')}`] : []),
    '  not checked without the database (backfill plan checks them):',
    ...v.notChecked.map((c) => `    ${c}`),
  ].join('\n');
}

export function command(): Command {
  return new Command('validate')
    .description('check specs without a database: YAML, schema, SQL through the PostgreSQL parser, a module bundled; says what only plan can check')
    .argument('<specs...>', 'spec files (YAML)')
    .addOption(outputOption())
    .action(validate);
}
