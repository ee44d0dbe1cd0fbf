/**
 * The JSON Schema of spec files, generated from the zod schema (the single source of
 * truth) with every field's line of meaning (field-docs.ts), for editors: put
 * `# yaml-language-server: $schema=./spec.schema.json` on a spec's first line after
 * `backfill schema > spec.schema.json`.
 */
import { z } from 'zod';
import { fleetSpecSchema } from '../fleet/fleet-schema';
import { specSchema } from './schema';
import { describeFields, specReference } from './spec-reference';

export function specJsonSchema(): Record<string, unknown> {
  return {
    ...describeFields(z.toJSONSchema(specSchema, { io: 'input', unrepresentable: 'any' })),
    title: 'Backfill spec',
    description: 'A backfill: scope, partitioning, transformation and its version, target and write mode, limits (docs/spec-reference.md).',
  };
}

export function fleetJsonSchema(): Record<string, unknown> {
  return {
    ...describeFields(z.toJSONSchema(fleetSpecSchema, { io: 'input', unrepresentable: 'any' })),
    title: 'Backfill fleet spec',
    description: 'One backfill over many databases: a spec with databases instead of database, and fleet (docs/fleets.md).',
  };
}

/** docs/spec-reference.md, as the schemas say it. */
export function specReferenceMarkdown(): string {
  return specReference(specJsonSchema(), fleetJsonSchema());
}
