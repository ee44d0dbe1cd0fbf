/**
 * A name as the catalog has it: PostgreSQL takes any characters in a quoted name, and every
 * statement here quotes names (db/sql.ts), so `createdAt`, `order` and `line no` all work. Left
 * out: a dot (it separates schema and table), a double quote (nobody needs one, and it is the
 * quoting character), control characters, and spaces at either end (YAML would keep them
 * invisible). At most 63 characters, PostgreSQL's limit.
 */
import { z } from 'zod';

const NAME = String.raw`[^\s."\p{Cc}](?:[^."\p{Cc}]{0,61}[^\s."\p{Cc}])?`;
const IDENT = new RegExp(`^${NAME}$`, 'u');
const QUALIFIED = new RegExp(`^(?:${NAME}\\.)?${NAME}$`, 'u');
const NAME_RULE = 'no dots, double quotes or control characters, no spaces at either end, at most 63 characters';

export const identifier = z.string().regex(IDENT, { message: `must be a column name as the catalog has it (${NAME_RULE})` });
export const tableName = z.string().regex(QUALIFIED, { message: `must be a table name like public.orders (each part: ${NAME_RULE})` });
