/**
 * The contract of a TypeScript transform (`transform.module` in a spec): rows in, rows
 * out, for logic SQL cannot express. A module default-exports defineTransform({...}).
 * It must be deterministic: the same input rows give the same output rows, on every
 * retry and every worker, because a retried chunk is computed again.
 *
 * In upsert and update modes each output row must come from its own input row alone: `transform`
 * is called with a chunk's rows a few thousand at a time, in key order, as they arrive (a chunk's
 * size follows live limits anyway, and checks recompute over ranges of their own). In replace
 * mode it is called once with its partition's every row, for rollups.
 *
 * Values arrive exact, as the `pg` driver gives them, except that timestamps, dates and
 * times stay PostgreSQL text (a JS Date would lose microseconds): bigint and numeric are
 * strings, json is parsed. Return values the target column accepts from JSON.
 */
export interface TransformModule<In = Record<string, unknown>, Out = Record<string, unknown>> {
  /** Output columns; each must exist in the target, and they must include target.key. */
  columns: string[];
  /** Source columns to read; default all. Reading only what is needed is the main speed lever in this mode. */
  reads?: string[];
  /** Optional: must equal transform.version in the spec, so a module and a spec cannot drift apart. */
  version?: number;
  transform(rows: In[]): Out[] | Promise<Out[]>;
}

export function defineTransform<In = Record<string, unknown>, Out = Record<string, unknown>>(module: TransformModule<In, Out>): TransformModule<In, Out> {
  return module;
}
