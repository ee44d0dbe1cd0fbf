import { restoresImages, runInputOf, type RecordedRunInput } from '../../src/workflows/run/input';
import type { Spec } from '../../src/specs/schema';

const base = {
  runId: 'r1',
  spec: { name: 'n' } as Spec,
  specHash: 'h',
  transform: { name: 't', version: 1, kind: 'sql' as const, codeHash: 'c' },
  startedBy: 'alice',
};

test('an input recorded before the kinds were written reads as its kind: run, retry, revert, a retry of a revert', () => {
  const legacy = (extra: object) => runInputOf({ ...base, ...extra } as RecordedRunInput);
  expect(legacy({ specFile: 'a.yaml', onlyStale: true })).toEqual({ ...base, kind: 'run', specFile: 'a.yaml', onlyStale: true });
  expect(legacy({ retry: { attempt: 2, actor: 'bob', reason: 'flaky' } })).toEqual({
    ...base,
    kind: 'retry',
    specFile: undefined,
    attempt: 2,
    actor: 'bob',
    reason: 'flaky',
  });
  const revert = legacy({ revert: { of: 'r0', partitions: ['p1'], reason: 'wrong' } });
  expect(revert).toEqual({ ...base, kind: 'revert', reverts: 'r0', partitions: ['p1'], reason: 'wrong' });
  const retriedRevert = legacy({ retry: { attempt: 2, actor: 'bob' }, revert: { of: 'r0', reason: 'wrong' } });
  expect(retriedRevert).toMatchObject({ kind: 'retry', attempt: 2, reverts: 'r0' });
  expect([revert, retriedRevert].map(restoresImages)).toEqual([true, true]);
  expect(restoresImages(legacy({ retry: { attempt: 2, actor: 'bob' } }))).toBe(false);
});

test('an input of today passes through as it is', () => {
  const input = { ...base, kind: 'revert' as const, reverts: 'r0', reason: 'wrong' };
  expect(runInputOf(input)).toBe(input);
});
