import { checkGuardSql, checkTransformSql, checkWhere, loadSqlParser } from '../../src/checks/spec-sql';

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
