/** `backfill schema`: the JSON Schema of spec files, for editor completion and checks. */
import { Command } from 'commander';
import { specJsonSchema } from '../../specs/json-schema';

export function command(): Command {
  return new Command('schema').description('print the JSON Schema of spec files (for editor completion and checks)').action(() => {
    process.stdout.write(`${JSON.stringify(specJsonSchema(), null, 2)}\n`);
  });
}
