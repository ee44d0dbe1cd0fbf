/**
 * "did you mean …?" for a spec field that does not exist: the fields the schema allows at that
 * place (read from its JSON Schema, the one `backfill schema` prints), and the one closest to
 * what was typed, if it is close (an edit or two, or the same letters in another case).
 */
import { z } from 'zod';

type JsonSchema = { properties?: Record<string, JsonSchema>; items?: JsonSchema; anyOf?: JsonSchema[]; oneOf?: JsonSchema[] };

/** The field names the schema allows in the mapping at `path` (list indexes as numbers). */
export function knownFields(schema: z.ZodType, path: (string | number)[]): string[] {
  let nodes: JsonSchema[] = [z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema];
  for (const segment of path) {
    nodes = nodes
      .flatMap(options)
      .flatMap((n) => (typeof segment === 'number' ? (n.items ? [n.items] : []) : n.properties?.[segment] ? [n.properties[segment]] : []));
  }
  return [...new Set(nodes.flatMap(options).flatMap((n) => Object.keys(n.properties ?? {})))];
}

function options(n: JsonSchema): JsonSchema[] {
  const alternatives = [...(n.anyOf ?? []), ...(n.oneOf ?? [])];
  return alternatives.length > 0 ? alternatives.flatMap(options) : [n];
}

/** The known field closest to `typed`, if within a third of its length in edits (at least one). */
export function closestField(typed: string, known: string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const distance = name.toLowerCase() === typed.toLowerCase() ? 0 : editDistance(typed, name);
    if (!best || distance < best.distance) best = { name, distance };
  }
  return best && best.distance <= Math.max(1, Math.floor(typed.length / 3)) ? best.name : undefined;
}

/** Levenshtein distance, with a swap of two neighbours counted as one edit. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.length][b.length];
}
