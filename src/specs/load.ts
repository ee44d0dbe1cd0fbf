/**
 * Reads a spec file: YAML -> zod -> a Spec plus the facts a run freezes (spec hash,
 * transform code hash, the absolute path of a module transform). Errors carry the file,
 * line and field path. Node-only (fs); workflows see only the parsed Spec.
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { LineCounter, parseDocument, isNode, type Document } from 'yaml';
import type { z } from 'zod';
import { specSchema, type Spec } from './schema';
import { resolveSpec, type ResolvedSpec } from './resolve';
import { SpecError, type SpecProblem } from './errors';
import { closestField, knownFields } from './did-you-mean';
import { bundleTransform, TransformBundleError, type TransformArtifact } from '../transforms/artifact';
import { canonicalJson } from '../util/canonical-json';
import { sha256 } from '../util/hash';

export { canonicalJson, sha256 };

export interface LoadedSpec {
  /** The spec as written, defaults filled: what is hashed and recorded. */
  spec: Spec;
  /** The same spec resolved (specs/resolve.ts): what checks, plans and statements are made from. */
  resolved: ResolvedSpec;
  /** The file as given on the command line; used in messages. */
  file: string;
  /** sha256 of the canonical JSON of the spec (module transforms: including the module's code hash). */
  specHash: string;
  transform: FrozenTransform;
  /** Module transforms: the bundle the code hash is of (never sent through Temporal). */
  artifact?: TransformArtifact;
}

/** What a run records about its transformation; a worker whose transform differs refuses the work. */
export interface FrozenTransform {
  name: string;
  version: number;
  kind: 'sql' | 'module';
  /** sha256 of the SQL text, or of the module's bundle (the module and everything it imports). */
  codeHash: string;
  /** Absolute path of the module file (module transforms only). */
  modulePath?: string;
}

/** A module transform as frozen on this machine: the bundle travels with the run through the ledger, never through Temporal. */
export interface FrozenModule {
  transform: FrozenTransform;
  artifact: TransformArtifact;
}

/** A spec is a page of YAML; anything near this size is a mistake or an attack on memory. */
export const MAX_SPEC_BYTES = 1024 * 1024;

export function loadSpecFile(file: string): LoadedSpec {
  return parseSpecText(readSpecFile(file), file);
}

/** A spec file's text, refused past MAX_SPEC_BYTES or when it cannot be read (a SpecError naming the file). */
export function readSpecFile(file: string): string {
  let text: string;
  try {
    const size = statSync(file).size;
    if (size > MAX_SPEC_BYTES) {
      throw new SpecError(file, [
        {
          path: '',
          message: `is ${(size / 1024 / 1024).toFixed(1)} MB; a spec may be at most 1 MB (to partition by many values, omit partition.values and let the plan discover them)`,
        },
      ]);
    }
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if (err instanceof SpecError) throw err;
    throw new SpecError(file, [{ path: '', message: `cannot be read (${(err as Error).message}); check the path` }]);
  }
  return text;
}

export function parseSpecText(text: string, file: string): LoadedSpec {
  const spec = validateSpecText(text, file, specSchema, (raw) => {
    // a fleet names its databases: its members are checked and planned by src/fleet
    if ('databases' in raw)
      return {
        path: 'databases',
        message:
          'names a fleet of databases, which `backfill plan` and `backfill start` take as a fleet (docs/fleets.md); this command works on one database: give it a spec with database: VAR',
      };
    return undefined;
  });
  return loadedFrom(spec, file);
}

/** The spec, frozen: its transform's code hash (a module bundled, unless `frozen` already was), its own hash, resolved. */
export function loadedFrom(spec: Spec, file: string, frozen = freeze(spec, file)): LoadedSpec {
  const { transform, artifact } = frozen;
  return { spec, resolved: resolveSpec(spec), file, specHash: hashSpec(spec, transform), transform, ...(artifact ? { artifact } : {}) };
}

/**
 * YAML text validated by `schema`, each problem with its file, field, line and column; `refuse`
 * may turn the document away first (a problem at the field it names).
 */
export function validateSpecText<T>(
  text: string,
  file: string,
  schema: z.ZodType<T>,
  refuse: (raw: Record<string, unknown>) => SpecProblem | undefined = () => undefined,
): T {
  const lineCounter = new LineCounter();
  // integers as BigInt, so 9007199254740993 is not silently read as ...992 (see exactIntegers)
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, intAsBigInt: true });
  if (doc.errors.length > 0) {
    throw new SpecError(
      file,
      doc.errors.map((e) => {
        const pos = lineCounter.linePos(e.pos[0]);
        return { path: '', message: `is not valid YAML: ${e.message.split('\n')[0]}`, line: pos.line, column: pos.col };
      }),
    );
  }
  let raw: unknown;
  try {
    // the yaml library stops alias expansion past maxAliasCount (a "billion laughs" document)
    raw = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    throw new SpecError(file, [
      { path: '', message: `is not valid YAML: ${(err as Error).message.split('\n')[0]}; write the values out instead of expanding aliases` },
    ]);
  }
  raw = exactIntegers(raw);
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new SpecError(file, [{ path: '', message: 'must be a YAML mapping with name, reason, database, source, partition, transform, target' }]);
  }
  const refused = refuse(raw as Record<string, unknown>);
  if (refused) throw new SpecError(file, [{ ...refused, ...positionOf(doc, lineCounter, [refused.path]) }]);
  const result = schema.safeParse(raw);
  if (!result.success) {
    throw new SpecError(
      file,
      result.error.issues.map((issue) => toProblem(issue, raw, doc, lineCounter, schema)),
    );
  }
  return result.data;
}

/**
 * YAML integers arrive as BigInt: those a JavaScript number holds exactly become numbers; a
 * larger one (a bigint key listed in partition.values) becomes its exact decimal text, which
 * the list accepts and any numeric field refuses with the value shown, never a rounded number.
 */
function exactIntegers(value: unknown): unknown {
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (Array.isArray(value)) return value.map(exactIntegers);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, exactIntegers(v)]));
  return value;
}

export function freeze(spec: Pick<Spec, 'transform'>, file: string): { transform: FrozenTransform; artifact?: TransformArtifact } {
  const { name, version } = spec.transform;
  if (spec.transform.sql !== undefined) {
    return { transform: { name, version, kind: 'sql', codeHash: sha256(spec.transform.sql) } };
  }
  const modulePath = path.resolve(path.dirname(path.resolve(file)), spec.transform.module!);
  return freezeModule(spec, modulePath, (message) => new SpecError(file, [{ path: 'transform.module', message }]));
}

/** Bundles a module transform; `fail` turns what went wrong into the caller's kind of error. */
export function freezeModule(spec: Pick<Spec, 'transform'>, modulePath: string, fail: (message: string) => Error): FrozenModule {
  const { name, version } = spec.transform;
  try {
    statSync(modulePath);
  } catch {
    throw fail(`names ${modulePath}, which cannot be read; the path is relative to the spec file`);
  }
  let artifact: TransformArtifact;
  try {
    artifact = bundleTransform(modulePath);
  } catch (err) {
    if (!(err instanceof TransformBundleError)) throw err;
    throw fail(`names ${modulePath}, which cannot be bundled: ${err.message}; fix the module or what it imports`);
  }
  return { transform: { name, version, kind: 'module', codeHash: artifact.codeHash, modulePath }, artifact };
}

export function hashSpec(spec: Spec, transform: FrozenTransform): string {
  return sha256(canonicalJson({ spec, transformCode: transform.codeHash }));
}

function toProblem(issue: z.core.$ZodIssue, raw: unknown, doc: Document, lines: LineCounter, schema: z.ZodType): SpecProblem {
  const segments = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
  const fieldPath = segments.join('.');
  const given = valueAt(raw, segments);
  let message = issue.message;
  if (issue.code === 'invalid_type' && given === undefined) {
    message = `is required (${issue.expected === 'object' ? 'a mapping' : `a ${issue.expected}`}); see "The spec" in the README`;
  } else if (issue.code === 'unrecognized_keys') {
    const known = knownFields(schema, segments);
    const guesses = issue.keys.map((k) => closestField(k, known)).filter((g): g is string => g !== undefined);
    const meant = guesses.length > 0 ? `did you mean ${guesses.join(', ')}? ` : '';
    message = `has unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')}; ${meant}check the spelling against "The spec" in the README (or: backfill schema)`;
  } else if (given !== undefined && typeof given !== 'object' && !message.includes('(got ')) {
    message = insertGot(message, given);
  }
  const position = positionOf(doc, lines, issue.code === 'unrecognized_keys' ? [...segments, issue.keys[0]] : segments);
  return { path: fieldPath, message, ...position };
}

/** Puts `(got X)` after the first clause, so the fix stays last: "must be … (got "1 day"); use …". */
function insertGot(message: string, given: unknown): string {
  const got = `(got ${JSON.stringify(given)})`;
  const cut = message.indexOf(';');
  return cut === -1 ? `${message} ${got}` : `${message.slice(0, cut)} ${got}${message.slice(cut)}`;
}

function valueAt(raw: unknown, segments: (string | number)[]): unknown {
  let current: unknown = raw;
  for (const s of segments) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string | number, unknown>)[s];
  }
  return current;
}

/** The line of the deepest node that exists on the path: a missing field points at its parent. */
function positionOf(doc: Document, lines: LineCounter, segments: (string | number)[]): { line?: number; column?: number } {
  for (let n = segments.length; n >= 0; n--) {
    const node = n === 0 ? doc.contents : doc.getIn(segments.slice(0, n), true);
    if (isNode(node) && node.range) {
      const pos = lines.linePos(node.range[0]);
      return { line: pos.line, column: pos.col };
    }
    // for keys that exist only as keys (unknown fields), find the key's own position
    if (n === segments.length && n > 0) {
      const parent = n === 1 ? doc.contents : doc.getIn(segments.slice(0, n - 1), true);
      const pair = (parent as { items?: { key: unknown }[] } | null)?.items?.find(
        (it) => isNode(it.key) && (it.key as { value?: unknown }).value === segments[n - 1],
      );
      const key = pair?.key as { range?: [number, number] } | undefined;
      if (key?.range) {
        const pos = lines.linePos(key.range[0]);
        return { line: pos.line, column: pos.col };
      }
    }
  }
  return {};
}
