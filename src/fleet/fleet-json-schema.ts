/**
 * The JSON Schema of fleet specs (`backfill schema --fleet`), with the same lines of meaning as
 * a spec's, and the spec reference that covers both (docs/spec-reference.md).
 */
import { z } from 'zod';
import { specJsonSchema } from '../specs/json-schema';
import { describeFields, specReference } from '../specs/spec-reference';
import { fleetSpecSchema } from './fleet-schema';

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
