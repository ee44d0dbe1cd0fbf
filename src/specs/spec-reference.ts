/**
 * The spec reference (docs/spec-reference.md), generated from the JSON Schema `backfill schema`
 * prints, so that the reference, the editors' hover text and the checks cannot disagree: every
 * field with its type, whether it is required, its default, its allowed values and its line of
 * meaning from field-docs.ts. Regenerate with `backfill schema --reference > docs/spec-reference.md`.
 */
import { FIELD_DOCS } from './field-docs';

type Node = { [key: string]: unknown } & {
  properties?: Record<string, Node>;
  required?: string[];
  items?: Node;
  additionalProperties?: Node | boolean;
  oneOf?: Node[];
  anyOf?: Node[];
};

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** The members' common property that holds a different constant in each (partition's `by`, an action's `action`). */
function discriminator(members: Node[]): string | undefined {
  const first = members[0]?.properties;
  if (!first) return undefined;
  return Object.keys(first).find((key) => members.every((m) => m.properties?.[key]?.const !== undefined));
}

const hasShape = (n: unknown): n is Node => typeof n === 'object' && n !== null && Object.keys(n).length > 0;

/**
 * Visits every field of `schema` in document order with its path as FIELD_DOCS keys it: `a.b`,
 * `a[]` for a list's items, `a{}` for a map's values, `a(by: time)` for one form of a field.
 */
export function walkFields(schema: Node, visit: (path: string, node: Node, required: boolean) => void): void {
  const walk = (node: Node, path: string, required: boolean) => {
    visit(path, node, required);
    inner(node, path);
  };
  const inner = (node: Node, path: string) => {
    for (const [key, child] of Object.entries(node.properties ?? {})) walk(child, path ? `${path}.${key}` : key, (node.required ?? []).includes(key));
    if (hasShape(node.items)) walk(node.items, `${path}[]`, false);
    if (hasShape(node.additionalProperties)) walk(node.additionalProperties, `${path}{}`, false);
    for (const members of [node.oneOf, node.anyOf]) {
      if (!members) continue;
      const key = discriminator(members);
      for (const member of members) {
        if (key) walk(member, `${path}(${key}: ${String(member.properties![key].const)})`, true);
        else inner(member, path);
      }
    }
  };
  inner(schema, '');
}

/** Puts each field's line of FIELD_DOCS into the schema as its `description` (editors show it). */
export function describeFields<T extends object>(schema: T): T {
  walkFields(schema as Node, (path, node) => {
    const line = FIELD_DOCS[path];
    if (line !== undefined) node.description = line;
  });
  return schema;
}

function typeOf(n: Node): string {
  if (n.const !== undefined) return `\`${JSON.stringify(n.const)}\``;
  const members = n.oneOf ?? n.anyOf;
  if (members) return [...new Set(members.map(typeOf))].join(' or ');
  if (n.type === 'array') return `list of ${n.items ? typeOf(n.items) : 'values'}`;
  if (n.type === 'object') return hasShape(n.additionalProperties) && !n.properties ? 'map' : 'object';
  return typeof n.type === 'string' ? n.type : 'any';
}

function allowedOf(n: Node): string {
  const parts: string[] = [];
  if (Array.isArray(n.enum)) parts.push((n.enum as unknown[]).map((v) => `\`${String(v)}\``).join(', '));
  const min = n.minimum as number | undefined;
  const max = n.maximum as number | undefined;
  const above = n.exclusiveMinimum as number | undefined;
  const bounded = max !== undefined && max < MAX_SAFE;
  if (min !== undefined && bounded) parts.push(`${min} to ${max}`);
  else if (min !== undefined) parts.push(`at least ${min}`);
  else if (above !== undefined) parts.push(bounded ? `above ${above}, at most ${max}` : `above ${above}`);
  else if (bounded) parts.push(`at most ${max}`);
  if (n.minItems !== undefined || n.maxItems !== undefined) {
    parts.push(n.maxItems !== undefined ? `${n.minItems ?? 0} to ${n.maxItems} items` : `at least ${n.minItems} item${n.minItems === 1 ? '' : 's'}`);
  }
  if (n.maxLength !== undefined) parts.push(`at most ${n.maxLength} characters`);
  if (n.format === 'uri') parts.push('an http(s) URL');
  const members = n.oneOf ?? n.anyOf;
  if (members && !discriminator(members)) {
    const each = members.map(allowedOf).filter(Boolean);
    if (each.length) parts.push(each.join('; or '));
  }
  return parts.join('; ');
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** One table row per field of `schema`, skipping paths in `except`. */
function rows(schema: Node, except: Set<string> = new Set()): { path: string; line: string }[] {
  const out: { path: string; line: string }[] = [];
  walkFields(schema, (path, node, required) => {
    if (except.has(path)) return;
    const meaning = FIELD_DOCS[path];
    if (meaning === undefined) throw new Error(`spec field ${path} has no line in field-docs.ts`);
    const byForm = /\([a-z]+: [a-z]+\)$/.test(path);
    const def = node.default === undefined ? '' : `\`${JSON.stringify(node.default)}\``;
    out.push({
      path,
      line: `| \`${path}\` | ${cell(typeOf(node))} | ${byForm ? '' : required ? 'yes' : ''} | ${cell(def)} | ${cell(allowedOf(node))} | ${cell(meaning)} |`,
    });
  });
  return out;
}

const HEAD = ['| field | type | required | default | allowed | meaning |', '|---|---|---|---|---|---|'];

/** The reference as Markdown: the spec's fields grouped by top-level field, then what a fleet spec adds. */
export function specReference(spec: object, fleet: object): string {
  const specRows = rows(spec as Node);
  const seen = new Set(specRows.map((r) => r.path));
  const groups = new Map<string, string[]>();
  for (const r of specRows) {
    const top = /^[a-zA-Z]+/.exec(r.path)![0];
    const group = ['name', 'reason', 'database'].includes(top) ? 'The run' : top;
    groups.set(group, [...(groups.get(group) ?? []), r.line]);
  }
  const out = [
    '# Spec reference',
    '',
    '<!-- Generated by `backfill schema --reference`; do not edit by hand: a test compares it with the schema. -->',
    '',
    'Every field a spec may hold. Paths read `limits.guards.commitMs.soft`; `[]` is an item of a list,',
    '`{}` a value of a map, and `(by: time)` one form of a field that has several. "required" is',
    'required when its parent is given. A field not listed is refused. How the fields work together,',
    'with a commented example: [spec.md](spec.md). Editors show the same lines: put',
    "`# yaml-language-server: $schema=./spec.schema.json` on a spec's first line after",
    '`backfill schema > spec.schema.json`.',
    '',
  ];
  for (const [group, lines] of groups) out.push(`## ${group === 'The run' ? group : `\`${group}\``}`, '', ...HEAD, ...lines, '');
  out.push(
    '## Fleet specs',
    '',
    'A fleet spec (`backfill schema --fleet`) holds every field above but `database`, and these:',
    '',
    ...HEAD,
    ...rows(fleet as Node, seen)
      .filter((r) => r.path !== 'database')
      .map((r) => r.line),
    '',
  );
  return out.join('\n');
}

/** Paths of FIELD_DOCS that no schema has: lines left behind by a removed field. */
export function orphanFieldDocs(...schemas: object[]): string[] {
  const paths = new Set<string>();
  for (const s of schemas) walkFields(s as Node, (path) => paths.add(path));
  return Object.keys(FIELD_DOCS).filter((p) => !paths.has(p));
}
