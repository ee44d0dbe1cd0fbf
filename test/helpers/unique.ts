/**
 * The one source of names a test makes for itself: databases, roles, task queues, spec and
 * module files. 48 bits from the operating system (Math.random is not shared between jest's
 * contexts, but it is not what to trust for "never the same twice") plus a per-process counter,
 * so two names made in one file can never be equal and names from two files almost never.
 * Run ids come from the product's own newRunId, which the suite uses as users do.
 */
import { randomBytes } from 'node:crypto';

let counter = 0;

/** `<label>_<12 hex>_<n>` with `separator` between; lower case, safe for SQL identifiers and queue names. */
export function uniqueName(label: string, separator = '_'): string {
  const clean = label.replace(/[^a-z0-9]/gi, separator).toLowerCase();
  counter += 1;
  return [clean, randomBytes(6).toString('hex'), counter.toString(36)].join(separator);
}
