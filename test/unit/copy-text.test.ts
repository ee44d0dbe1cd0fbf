/**
 * The COPY text encoder of a TypeScript transform's rows, without a database: the exact bytes
 * it writes, and every row it leaves to JSON (test/copy-text.test.ts proves on a real server that
 * what it does write means what JSON meant).
 */
import vm from 'node:vm';
import { copyText } from '../../src/transforms/copy-text';

test('fields are tab-separated, NULL is \\N, and backslash, tab, newline and carriage return are escaped', () => {
  const rows = [
    { n: 1, txt: 'a\tb\\c\nd\re', at: new Date(Date.UTC(2024, 1, 29, 1, 2, 3, 45)), ok: true, gone: undefined },
    { n: -0, txt: '\\N', at: new Date(NaN), ok: false, gone: null },
    { n: 1e21, txt: '', at: null, ok: NaN, gone: () => 1 },
  ];
  expect(copyText(rows, ['n', 'txt', 'at', 'ok', 'gone'])?.toString()).toBe(
    '1\ta\\tb\\\\c\\nd\\re\t2024-02-29T01:02:03.045Z\ttrue\t\\N\n' + '0\t\\\\N\t\\N\tfalse\t\\N\n' + '1e+21\t\t\\N\t\\N\t\\N\n',
  );
  expect(copyText([], ['n'])?.length).toBe(0);
});

test('a chunk larger than the first guess of its size grows its buffer and loses nothing', () => {
  const long = 'é'.repeat(5000);
  const rows = Array.from({ length: 300 }, (_, n) => ({ n, txt: n % 7 === 0 ? long : 'x' }));
  const text = copyText(rows, ['n', 'txt'])!.toString('utf8');
  expect(text.split('\n')).toHaveLength(301);
  expect(text.split('\n')[7]).toBe(`7\t${long}`);
});

test('what only JSON can carry goes through JSON: nested values, bigint, NUL, half a surrogate pair, rows JSON would not read by their own properties', () => {
  const columns = ['n', 'txt'];
  const jsonOnly: [string, unknown][] = [
    ['a nested object', { n: 1, txt: { a: 1 } }],
    ['an array', { n: 1, txt: [1, 2] }],
    ['a boxed string', { n: 1, txt: new String('x') }],
    ['a bigint', { n: 1, txt: 5n }],
    ['a toJSON returning an object', { n: 1, txt: { toJSON: () => [1] } }],
    ['NUL in a string', { n: 1, txt: 'a\u0000b' }],
    ['a lone high surrogate', { n: 1, txt: 'a\ud800b' }],
    ['a lone low surrogate', { n: 1, txt: '\udc00' }],
    [
      'a getter on a class',
      new (class Row {
        n = 1;
        get txt() {
          return 'x';
        }
      })(),
    ],
    [
      'a class with toJSON',
      new (class Row {
        n = 1;
        txt = 'x';
        toJSON() {
          return { n: 2 };
        }
      })(),
    ],
    ['a boxed number as a row', new Number(5)],
    ['a row with its own toJSON', { n: 1, txt: 'x', toJSON: () => ({ n: 2 }) }],
    ['an array as a row', [1, 'x']],
    ['null as a row', null],
    ['a Proxy as a row', new Proxy({ n: 1, txt: 'x' }, {})],
    ['a property JSON does not see', Object.defineProperty({ n: 1 }, 'txt', { value: 'hidden', enumerable: false })],
    ['a value inherited from the prototype', Object.create({ txt: 'inherited' }, { n: { value: 1, enumerable: true } })],
  ];
  for (const [what, row] of jsonOnly) expect([what, copyText([{ n: 0, txt: 'fine' }, row], columns)]).toEqual([what, null]);
  expect(copyText([{ constructor: 'x' }], ['constructor'])).toBeNull();
  // a paired surrogate is an ordinary character
  expect(copyText([{ n: 1, txt: '😀' }], columns)?.toString()).toBe('1\t😀\n');
  expect(copyText([Object.assign(Object.create(null), { n: 1, txt: 'x' })], columns)?.toString()).toBe('1\tx\n');
});

test('rows JSON reads by their own properties are encoded whatever made them: a class instance, an object from another realm', () => {
  const columns = ['n', 'txt'];
  const instance = new (class Row {
    n = 1;
    txt = 'x';
  })();
  // a transform's module runs in its own vm context under jest: its objects have another Object.prototype
  const foreign = vm.runInNewContext("({ n: 2, txt: 'y', at: new Date(Date.UTC(2024, 0, 1)) })") as Record<string, unknown>;
  expect(Object.getPrototypeOf(foreign)).not.toBe(Object.prototype);
  expect(copyText([instance, foreign], [...columns, 'at'])?.toString()).toBe('1\tx\t\\N\n2\ty\t2024-01-01T00:00:00.000Z\n');
  expect(copyText([vm.runInNewContext('({ n: 3, txt: [1] })')], columns)).toBeNull();
});
