/**
 * The JSON Schema of spec files, generated from the zod schema (the single source of
 * truth) with every field's line of meaning (field-docs.ts), for editors: put
 * `# yaml-language-server: $schema=./spec.schema.json` on a spec's first line after
 * `backfill schema > spec.schema.json`.
 */
import { z } from 'zod';
import { specSchema } from './schema';
import { describeFields } from './spec-reference';

export function specJsonSchema(): Record<string, unknown> {
  return {
    ...describeFields(z.toJSONSchema(specSchema, { io: 'input', unrepresentable: 'any' })),
    title: 'Backfill spec',
    description: 'A backfill: scope, partitioning, transformation and its version, target and write mode, limits (docs/spec-reference.md).',
  };
}
