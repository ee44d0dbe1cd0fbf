import { checkAfterSql, checkGuardSql, checkInvariantSql, checkTransformSql, checkWhere, loadSqlParser } from '../../src/preflight/spec-sql';

beforeAll(() => loadSqlParser());

describe('transform.sql is one SELECT over chunk that only reads', () => {
  test.each([
    ['SELECT c.id FROM chunk c', { tables: [], functions: [] }],
    ['select * from CHUNK', { tables: [], functions: [] }],
    ['WITH x AS (SELECT * FROM chunk) SELECT * FROM x', { tables: [], functions: [] }],
    [
      'SELECT c.id, round(c.amount_cents * r.usd_rate / 100.0, 2) AS amount_usd FROM chunk c JOIN public.fx_rates r USING (currency) -- trailing comment',
      { tables: ['public.fx_rates'], functions: ['round'], operators: ['*', '/'] },
    ],
    ['SELECT c.id, app.rate_at(c.created_at) FROM chunk c WHERE c.id IN (SELECT id FROM app.allow)', { tables: ['app.allow'], functions: ['app.rate_at'] }],
    ['SELECT c.id, c.tags OPERATOR(app.@@) 1, clock_timestamp() FROM chunk c', { tables: [], functions: ['clock_timestamp'], operators: ['app.@@'] }],
  ])('%s is accepted; it reads %j', (sql, reads) => {
    expect(checkTransformSql(sql)).toEqual({ ok: true, reads });
  });

  test.each([
    [
      'SELECT * FROM chunk_archive',
      'never reads `chunk`; the transform must SELECT from the relation chunk (the source rows of one chunk), e.g. SELECT c.id, … FROM chunk c',
    ],
    [
      "SELECT 'chunk' FROM orders -- chunk",
      'never reads `chunk`; the transform must SELECT from the relation chunk (the source rows of one chunk), e.g. SELECT c.id, … FROM chunk c',
    ],
    [
      'SELECT * FROM public.chunk',
      'never reads `chunk`; the transform must SELECT from the relation chunk (the source rows of one chunk), e.g. SELECT c.id, … FROM chunk c',
    ],
    ['SELECT c.id FROM chunk c; COMMIT; CREATE TABLE public.pwned()', 'must be exactly one statement, a SELECT over `chunk` (found 3)'],
    ['DELETE FROM app.orders', 'must be a SELECT over `chunk` (found DELETE)'],
    ['CREATE TABLE public.pwned AS SELECT * FROM chunk', 'must be a SELECT over `chunk` (found CREATE TABLE AS)'],
    ['WITH d AS (DELETE FROM app.orders RETURNING id) SELECT c.id FROM chunk c', 'contains DELETE (a data-modifying WITH); it may only read'],
    [
      'SELECT c.id FROM chunk c WHERE EXISTS (WITH u AS (UPDATE app.fx SET usd_rate = 0 RETURNING 1) SELECT 1 FROM u)',
      'contains UPDATE (a data-modifying WITH); it may only read',
    ],
    ['SELECT c.id INTO public.pwned FROM chunk c', 'is SELECT … INTO, which creates a table; remove INTO'],
    ['SELECT c.id FROM chunk c FOR UPDATE', 'locks rows (FOR UPDATE / FOR SHARE); remove the locking clause: chunks never lock source rows'],
    ['SELEC c.id FROM chunk c', 'does not parse: syntax error at or near "SELEC" at character 1'],
    // $n would bind to the engine's own values: the chunk's bounds
    [
      'SELECT c.id, c.v + coalesce($2::int, 0) AS v FROM chunk c',
      'refers to a parameter ($2) at character 29; spec SQL has no parameters to bind: write the value itself, or read it from a table',
    ],
  ])('%s is refused: %s', (sql, message) => {
    expect(checkTransformSql(sql)).toEqual({ ok: false, message });
  });
});

describe('source.where is exactly one condition', () => {
  test.each([
    ["status <> 'void'", { functions: [], operators: ['<>'] }],
    ["created_at >= '2024-01-01' AND tenant IN (SELECT id FROM app.tenants)", { functions: [], operators: ['>='] }],
    ["status <> 'void' -- paid ones only", { functions: [], operators: ['<>'] }],
    ["created_at < now() - interval '1 day'", { functions: ['now'], operators: ['-', '<'] }],
  ])('%s is accepted; it calls %j', (where, routines) => {
    expect(checkWhere(where)).toEqual({ ok: true, routines });
  });

  test.each([
    ['true); COMMIT; CREATE TABLE public.pwned(); SELECT (1', 'does not parse: syntax error at or near ")" at character 5'],
    ['x) OR (true', 'does not parse: syntax error at or near ")" at character 2'],
    ['true; DELETE FROM app.orders', "must be one condition on the source rows, such as created_at >= '2024-01-01' (found 2 statements)"],
    ['true ORDER BY 1', "must be one condition on the source rows, such as created_at >= '2024-01-01' (found SORT)"],
    ['true GROUP BY 1 HAVING true', "must be one condition on the source rows, such as created_at >= '2024-01-01' (found GROUP, HAVING)"],
    ['true UNION SELECT 1', "must be one condition on the source rows, such as created_at >= '2024-01-01' (found UNION)"],
    ['true LIMIT 1', "must be one condition on the source rows, such as created_at >= '2024-01-01' (found LIMIT)"],
    ['id IN (SELECT id FROM app.orders FOR UPDATE)', 'locks rows (FOR UPDATE / FOR SHARE); remove the locking clause: chunks never lock source rows'],
    ['true /* unclosed', 'does not parse: unterminated /* comment at or near "/* unclosed at character 6'],
    // a filter reading the chunk's bounds would skip rows of every chunk, and the run would still succeed
    ['id <> $1', 'refers to a parameter ($1) at character 7; spec SQL has no parameters to bind: write the value itself, or read it from a table'],
  ])('%s is refused: %s', (where, message) => {
    expect(checkWhere(where)).toEqual({ ok: false, message });
  });
});

describe('guard SQL is one SELECT', () => {
  test.each([
    ['SELECT 1', { ok: true }],
    ['SELECT queue FROM app.guard_ctl', { ok: true }],
    ['SELECT 1; DROP TABLE app.orders', { ok: false, message: 'must be exactly one statement, a SELECT returning one number (found 2)' }],
    ['UPDATE app.fx SET usd_rate = 0 RETURNING 1', { ok: false, message: 'must be a SELECT returning one number (found UPDATE)' }],
  ])('%s -> %j', (sql, verdict) => {
    expect(checkGuardSql(sql)).toEqual(verdict);
  });
});

test('no spec SQL refers to a parameter: guards, invariants and after-actions as the transform and the filter', () => {
  const refused = (n: number, at: number) => ({
    ok: false,
    message: `refers to a parameter ($${n}) at character ${at}; spec SQL has no parameters to bind: write the value itself, or read it from a table`,
  });
  expect(checkGuardSql('SELECT count(*) FROM app.queue WHERE q > $1')).toEqual(refused(1, 42));
  expect(checkInvariantSql('SELECT * FROM source_rows s WHERE s.id = $3')).toEqual(refused(3, 42));
  expect(checkAfterSql('UPDATE app.totals SET n = n + 1 WHERE day = $1::date')).toEqual(refused(1, 45));
  // a dollar-quoted string is text, not a parameter
  expect(checkGuardSql('SELECT length($q$ $1 $q$)')).toEqual({ ok: true });
});

describe('no spec SQL reads credentials, the server’s files, or SQL given as text', () => {
  const hashes = 'which holds password hashes: spec SQL may not read credential catalogs, whatever the database role (docs/security.md)';
  test.each([
    ['SELECT c.id, a.rolpassword FROM chunk c CROSS JOIN pg_authid a', `reads pg_authid, ${hashes}`],
    ['SELECT c.id, (SELECT rolpassword FROM pg_catalog.pg_authid LIMIT 1) FROM chunk c', `reads pg_catalog.pg_authid, ${hashes}`],
    ['SELECT c.id FROM chunk c WHERE EXISTS (SELECT 1 FROM "pg_shadow")', `reads pg_shadow, ${hashes}`],
    ['WITH s AS (TABLE PG_AUTHID) SELECT c.id FROM chunk c, s', `reads pg_authid, ${hashes}`],
    [
      'SELECT c.id, u.usename FROM chunk c JOIN pg_user u ON true',
      'reads pg_user, which holds the database users: spec SQL may not read credential catalogs, whatever the database role (docs/security.md)',
    ],
    [
      'SELECT c.id, m.umoptions FROM chunk c, information_schema.user_mapping_options m',
      'reads information_schema.user_mapping_options, which holds foreign-server passwords: spec SQL may not read credential catalogs, whatever the database role (docs/security.md)',
    ],
    [
      "SELECT c.id, query_to_xml('select rolpassword from pg_authid', true, false, '') FROM chunk c",
      'calls query_to_xml(), which runs SQL given as text: spec SQL may not, whatever the database role (docs/security.md)',
    ],
    [
      "SELECT c.id, pg_catalog.table_to_xml('pg_authid'::regclass, true, false, '') FROM chunk c",
      'calls pg_catalog.table_to_xml(), which reads any table named as text: spec SQL may not, whatever the database role (docs/security.md)',
    ],
    [
      "SELECT c.id, pg_read_file('/var/lib/postgresql/.pgpass') FROM chunk c",
      'calls pg_read_file(), which reads the server’s files: spec SQL may not, whatever the database role (docs/security.md)',
    ],
    [
      "SELECT c.id, x.v FROM chunk c, ext.dblink('host=elsewhere', 'select 1') AS x(v int)",
      'calls ext.dblink(), which runs SQL given as text over another connection: spec SQL may not, whatever the database role (docs/security.md)',
    ],
  ])('transform %s is refused', (sql, message) => {
    expect(checkTransformSql(sql)).toEqual({ ok: false, message });
  });

  test('the filter, guards, invariants and after-actions are held to the same', () => {
    expect(checkWhere("tenant IN (SELECT oid FROM pg_authid WHERE rolname = 'x')")).toEqual({ ok: false, message: `reads pg_authid, ${hashes}` });
    expect(checkGuardSql("SELECT length(pg_read_binary_file('global/pg_control'))")).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^calls pg_read_binary_file\(\)/),
    });
    expect(checkInvariantSql('SELECT * FROM source_rows s WHERE s.owner IN (SELECT rolname FROM pg_roles)')).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^reads pg_roles, which holds the database roles/),
    });
    expect(checkAfterSql('INSERT INTO app.audit SELECT usename, passwd FROM pg_shadow')).toEqual({ ok: false, message: `reads pg_shadow, ${hashes}` });
    expect(checkAfterSql("SELECT ts_stat('select tsv from app.docs')")).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^calls ts_stat\(\), which runs SQL/),
    });
  });

  test.each([
    'SELECT c.id, u.name FROM chunk c JOIN app.pg_user u USING (id)',
    "SELECT c.id, app.table_to_xml_lite(c.payload) FROM chunk c WHERE c.kind <> 'pg_authid'",
    'SELECT c.id, s.state FROM chunk c LEFT JOIN pg_stat_activity s ON s.pid = c.pid',
  ])('%s is a transform like any other', (sql) => {
    expect(checkTransformSql(sql)).toMatchObject({ ok: true });
  });
  test('a guard may watch the server’s activity', () => {
    expect(checkGuardSql("SELECT count(*) FROM pg_stat_activity WHERE state = 'active'")).toEqual({ ok: true });
  });
});
