/**
 * The spec reference cannot drift from the schema: every field of a spec and a fleet spec has its
 * line of meaning, no line outlives its field, the JSON Schema carries the lines for editors, and
 * docs/spec-reference.md is exactly what `backfill schema --reference` prints now.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fleetJsonSchema, specReferenceMarkdown } from '../../src/fleet/fleet-json-schema';
import { specJsonSchema } from '../../src/specs/json-schema';
import { orphanFieldDocs, walkFields } from '../../src/specs/spec-reference';
import { FIELD_DOCS } from '../../src/specs/field-docs';

const ROOT = path.join(__dirname, '..', '..');

test('every field of a spec and of a fleet spec has a line of meaning, in the JSON Schema too', () => {
  for (const schema of [specJsonSchema(), fleetJsonSchema()]) {
    const missing: string[] = [];
    walkFields(schema, (field, node) => {
      if (!FIELD_DOCS[field] || node.description !== FIELD_DOCS[field]) missing.push(field);
    });
    expect(missing).toEqual([]);
  }
});

test('no line of field-docs names a field the schemas no longer have', () => {
  expect(orphanFieldDocs(specJsonSchema(), fleetJsonSchema())).toEqual([]);
});

test('docs/spec-reference.md is current (regenerate: backfill schema --reference > docs/spec-reference.md)', () => {
  expect(readFileSync(path.join(ROOT, 'docs', 'spec-reference.md'), 'utf8')).toBe(specReferenceMarkdown());
});

test('the reference names each form of a field with several, and the defaults the schema applies', () => {
  const md = specReferenceMarkdown();
  for (const form of ['range', 'time', 'list', 'native']) expect(md).toContain(`| \`partition(by: ${form})\` | object |`);
  expect(md).toMatch(/\| `limits\.chunkSize` \| integer \| {2}\| `5000` \| 1 to 1000000 \|/);
  expect(md).toContain('| `target.mode` | string | yes |  | `upsert`, `update`, `replace` |');
});
