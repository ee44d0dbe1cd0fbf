/** `backfill schema`: the JSON Schema of spec files, for editor completion and checks, or the spec reference. */
import { Command } from 'commander';
import { fleetJsonSchema, specReferenceMarkdown } from '../../fleet/fleet-json-schema';
import { specJsonSchema } from '../../specs/json-schema';

export function command(): Command {
  return new Command('schema')
    .description('print the JSON Schema of spec files (for editor completion and checks), or the spec reference as Markdown')
    .option('--fleet', 'the schema of fleet specs (databases: instead of database:)')
    .option('--reference', 'the spec reference as Markdown (docs/spec-reference.md)')
    .addHelpText(
      'after',
      '\nExamples:\n  backfill schema > spec.schema.json\n  backfill schema --fleet > fleet.schema.json\n  backfill schema --reference > spec-reference.md',
    )
    .action((opts: { fleet?: boolean; reference?: boolean }) => {
      if (opts.reference) process.stdout.write(specReferenceMarkdown());
      else process.stdout.write(`${JSON.stringify(opts.fleet ? fleetJsonSchema() : specJsonSchema(), null, 2)}\n`);
    });
}
