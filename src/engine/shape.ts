/**
 * RunShape: the catalog facts a run is compiled against (key type, output columns, …),
 * read once at registration and stored with the run, so every worker builds the same
 * statements and a later schema change is detected rather than silently absorbed.
 */
export interface RunShape {
  /** format_type() of source.key, used to cast cursors: e.g. `bigint`, `text`, `uuid`. */
  keyType: string;
  /** format_type() of partition.column in the source. */
  partitionColumnType: string;
  /** Columns the transform produces, in order; all exist in the target. */
  outputColumns: string[];
  /** format_type() of the first target.key column; when it is orderable, writes bound the target scan by the chunk's key range. */
  targetKeyType?: string;
  /** format_type() of target.partitionColumn (replace mode only). */
  targetPartitionColumnType?: string;
}
