/**
 * A worker takes the build's workflow bundle only while it is as new as the compiled workflows:
 * a later `tsc` without the bundle step must send it back to bundling at start, never run old
 * workflow code.
 */
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { prebuiltBundle } from '../../src/temporal/prebuilt-bundle';

let dist: string;
const bundle = () => path.join(dist, 'workflows.bundle.js');
const entry = () => path.join(dist, 'workflows', 'index.js');
const at = (file: string, seconds: number) => utimesSync(file, seconds, seconds);

beforeEach(() => {
  dist = mkdtempSync(path.join(os.tmpdir(), 'prebuilt-bundle-'));
  mkdirSync(path.join(dist, 'workflows'));
  writeFileSync(entry(), '');
});
afterEach(() => rmSync(dist, { recursive: true, force: true }));

test('a bundle written after the workflows were compiled is used', () => {
  writeFileSync(bundle(), '');
  at(entry(), 1_000);
  at(bundle(), 1_001);
  expect(prebuiltBundle(dist)).toEqual({ codePath: bundle() });
});

test('workflows compiled after the bundle make it stale: the worker bundles at start', () => {
  writeFileSync(bundle(), '');
  at(bundle(), 1_000);
  at(entry(), 1_001);
  expect(prebuiltBundle(dist)).toBeUndefined();
});

test('no bundle (a build before this step, or run from source): the worker bundles at start', () => {
  expect(prebuiltBundle(dist)).toBeUndefined();
});
