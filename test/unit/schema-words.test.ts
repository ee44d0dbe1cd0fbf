import { z } from 'zod';
import { schemaMessage } from '../../src/domain/schema-words';
import { limitsSchema } from '../../src/domain/limits-schema';
import { closestField, knownFields } from '../../src/specs/did-you-mean';
import { specSchema } from '../../src/specs/schema';
import { parseSpecText } from '../../src/specs/load';

const first = (r: { success: boolean; error?: z.ZodError }) => r.error!.issues[0].message;

test("the schema library's own messages come in the project's words", () => {
  expect(first(limitsSchema.safeParse({ chunkSize: 0 }))).toBe('must be at least 1');
  expect(first(limitsSchema.safeParse({ concurrency: 1e9 }))).toMatch(/^must be at most \d+$/);
  expect(first(limitsSchema.safeParse({ concurrency: 'four' }))).toBe('must be a number');
  expect(first(limitsSchema.safeParse({ guards: { lockWaits: { soft: -1 } } }))).toBe('must be at least 0');
  expect(first(limitsSchema.safeParse({ flushEveryChunk: 'yes' }))).toBe('must be true or false');
  expect(first(z.strictObject({ a: z.array(z.string()).min(2) }).safeParse({ a: ['x'] }))).toBe('must list at least 2');
  expect(first(z.string().min(1).safeParse(''))).toBe('must not be empty');
  expect(first(z.enum(['stop', 'continue']).safeParse('halt'))).toBe('must be one of "stop", "continue"');
  // a field's own message stays its own
  expect(first(z.number().min(1, { message: 'own words' }).safeParse(0))).toBe('own words');
  expect(schemaMessage({ code: 'custom', input: 1, path: [] } as never)).toBeUndefined();
});

test('an unknown field is matched to the one meant, at its place in the spec', () => {
  expect(knownFields(specSchema, ['limits'])).toEqual(expect.arrayContaining(['chunkSize', 'rowsPerSecond', 'guards']));
  expect(knownFields(specSchema, ['partition'])).toEqual(expect.arrayContaining(['by', 'column', 'size', 'count', 'values', 'rows', 'timeZone']));
  expect(closestField('chunksize', knownFields(specSchema, ['limits']))).toBe('chunkSize');
  expect(closestField('rowsPerSec', knownFields(specSchema, ['limits']))).toBe('rowsPerSecond');
  expect(closestField('speed', knownFields(specSchema, ['limits']))).toBeUndefined();
  expect(closestField('reasons', knownFields(specSchema, []))).toBe('reason');
  expect(closestField('trasnform', knownFields(specSchema, []))).toBe('transform');
  expect(closestField('xyz', knownFields(specSchema, []))).toBeUndefined();
});

test('a spec file says it', () => {
  const text = ['name: t', 'reason: r', 'database: DATABASE_URL', 'sourse: { table: a, key: id }'].join('\n');
  expect(() => parseSpecText(text, 'spec.yaml')).toThrow(/has unknown field sourse; did you mean source\?/);
});
