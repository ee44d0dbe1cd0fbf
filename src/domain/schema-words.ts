/**
 * The schema library's own messages ("Too small: expected number to be >=1") in the project's
 * words, for every schema field that does not carry its own message: spec files, limit changes,
 * saved plans. Installed once per module graph (and per workflow isolate) by importing this.
 * Messages say what the field must be; the file, field and the value given are added where the
 * error is reported.
 */
import { z } from 'zod';

const TYPES: Record<string, string> = {
  object: 'a mapping',
  array: 'a list',
  string: 'text',
  number: 'a number',
  int: 'a whole number',
  bigint: 'a whole number',
  boolean: 'true or false',
};

type Issue = z.core.$ZodRawIssue;

export function schemaMessage(issue: Issue): string | undefined {
  switch (issue.code) {
    case 'too_small':
      return bound(issue.origin, 'at least', 'more than', issue.minimum, issue.inclusive !== false);
    case 'too_big':
      return bound(issue.origin, 'at most', 'less than', issue.maximum, issue.inclusive !== false);
    case 'invalid_type':
      return `must be ${TYPES[issue.expected] ?? `a ${issue.expected}`}`;
    case 'invalid_value':
      return issue.values.length === 1
        ? `must be ${JSON.stringify(issue.values[0])}`
        : `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'not_multiple_of':
      return `must be a multiple of ${String(issue.divisor)}`;
    case 'invalid_union':
      return 'is none of the forms this field takes; see "The spec" in the README (or: backfill schema)';
    case 'invalid_format':
      return `is not ${issue.format === 'regex' ? 'in the form this field takes' : `a valid ${issue.format}`}; see "The spec" in the README`;
    default:
      return undefined;
  }
}

function bound(origin: string | undefined, inclusive: string, exclusive: string, limit: unknown, isInclusive: boolean): string {
  const n = Number(limit);
  if (origin === 'string') return n === 1 && isInclusive && inclusive === 'at least' ? 'must not be empty' : `must be ${inclusive} ${n} characters`;
  if (origin === 'array' || origin === 'set') return `must list ${inclusive} ${n}`;
  return `must be ${isInclusive ? inclusive : exclusive} ${String(limit)}`;
}

z.config({ customError: schemaMessage });
