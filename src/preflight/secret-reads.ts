/**
 * What spec SQL may never read, whatever role runs it: the catalogs that hold credentials
 * and role names, the server's files, and the functions that run SQL handed to them as text
 * (which would hide any read from this check). Under a superuser connection a transform
 * selecting rolpassword from pg_authid would copy password hashes into whatever table the
 * run writes; the least-privilege role of docs/security.md cannot read them anyway, this
 * refuses them for every role. A view a user made over one of these is beyond a text check:
 * that is what the least-privilege role is for.
 */

/** Relations in pg_catalog / information_schema, by name, with what they would give away. */
const SECRET_RELATIONS: Record<string, string> = {
  pg_authid: 'password hashes',
  pg_shadow: 'password hashes',
  pg_user: 'the database users',
  pg_roles: 'the database roles',
  pg_auth_members: 'who holds which role',
  pg_user_mapping: 'foreign-server passwords',
  pg_user_mappings: 'foreign-server passwords',
  user_mapping_options: 'foreign-server passwords',
  pg_hba_file_rules: 'the server’s authentication rules',
  pg_ident_file_mappings: 'the server’s user-name maps',
  pg_file_settings: 'the server’s configuration files, connection strings included',
};

const SYSTEM_SCHEMAS = new Set(['pg_catalog', 'information_schema']);

/** Functions that run SQL given to them as text, or read the server's files. */
const SECRET_FUNCTIONS: Record<string, string> = {
  query_to_xml: 'runs SQL given as text',
  query_to_xmlschema: 'runs SQL given as text',
  query_to_xml_and_xmlschema: 'runs SQL given as text',
  cursor_to_xml: 'reads any open cursor',
  table_to_xml: 'reads any table named as text',
  table_to_xml_and_xmlschema: 'reads any table named as text',
  schema_to_xml: 'reads every table of a schema',
  schema_to_xml_and_xmlschema: 'reads every table of a schema',
  database_to_xml: 'reads every table of the database',
  database_to_xml_and_xmlschema: 'reads every table of the database',
  ts_stat: 'runs SQL given as text',
  pg_read_file: 'reads the server’s files',
  pg_read_binary_file: 'reads the server’s files',
  pg_stat_file: 'reads the server’s files',
  pg_ls_dir: 'lists the server’s files',
  lo_import: 'reads the server’s files',
  lo_export: 'writes the server’s files',
};
const SECRET_FUNCTION_PREFIXES: [string, string][] = [['pg_ls_', 'lists the server’s files']];
/** Extension functions live in whichever schema the extension went into. */
const SECRET_EXTENSION_PREFIXES: [string, string][] = [['dblink', 'runs SQL given as text over another connection']];

type Node = Record<string, unknown>;

/** Why a parsed statement may not run, or undefined: the first secret relation or function it names. */
export function secretReadProblem(tree: unknown): string | undefined {
  for (const node of nodes(tree)) {
    if (typeof node.relname === 'string') {
      const schema = typeof node.schemaname === 'string' ? node.schemaname : undefined;
      const what = SECRET_RELATIONS[node.relname];
      if (what && (schema === undefined || SYSTEM_SCHEMAS.has(schema))) {
        return `reads ${schema ? `${schema}.` : ''}${node.relname}, which holds ${what}: spec SQL may not read credential catalogs, whatever the database role (docs/security.md)`;
      }
    }
    if (Array.isArray(node.funcname)) {
      const parts = (node.funcname as { String?: { sval: string } }[]).map((p) => p.String?.sval ?? '');
      const name = parts[parts.length - 1];
      const schema = parts.length > 1 ? parts[0] : undefined;
      const builtin = schema === undefined || schema === 'pg_catalog';
      const what =
        (builtin ? (SECRET_FUNCTIONS[name] ?? SECRET_FUNCTION_PREFIXES.find(([prefix]) => name.startsWith(prefix))?.[1]) : undefined) ??
        SECRET_EXTENSION_PREFIXES.find(([prefix]) => name.startsWith(prefix))?.[1];
      if (what) return `calls ${parts.join('.')}(), which ${what}: spec SQL may not, whatever the database role (docs/security.md)`;
    }
  }
  return undefined;
}

/** Every object of a parse tree, depth first (a RangeVar sits bare as a statement's target, not only wrapped). */
function* nodes(value: unknown): Generator<Node> {
  if (Array.isArray(value)) {
    for (const item of value) yield* nodes(item);
  } else if (value && typeof value === 'object') {
    yield value as Node;
    for (const child of Object.values(value as Node)) yield* nodes(child);
  }
}
