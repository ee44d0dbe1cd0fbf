/**
 * Every spec under examples/ is valid as `backfill validate` checks it, and the TypeScript
 * example transform computes what the demo's SQL computes, bundled as a run freezes it: its
 * import of the package's transform entry is supplied by the worker, not bundled.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { validateSpecOffline } from '../../src/operations/validate-spec';
import { bundleTransform, evaluateArtifact } from '../../src/transforms/artifact';
import exampleTransform, { toUsd } from '../../examples/transforms/orders-usd';

const EXAMPLES = path.join(__dirname, '..', '..', 'examples');
const specs = readdirSync(EXAMPLES).filter((f) => f.endsWith('.yaml'));

test.each(specs)('examples/%s passes backfill validate', async (file) => {
  const verdict = await validateSpecOffline(path.join(EXAMPLES, file));
  expect(verdict.name).toMatch(/^[a-z0-9-]+$/);
});

test('the example transform rounds as PostgreSQL round(numeric, 2) does, and keeps NULLs', () => {
  // 123.45 EUR * 1.0832 = 133.72104; 0.75 JPY * 0.006712 = 0.005034 (rounds up); 1.00 USD exactly
  expect(toUsd('12345', 'EUR')).toBe('133.72');
  expect(toUsd('75', 'JPY')).toBe('0.01');
  expect(toUsd('100', 'USD')).toBe('1.00');
  expect(toUsd('-12345', 'EUR')).toBe('-133.72');
  expect(toUsd(null, 'EUR')).toBeNull();
  expect(toUsd('100', null)).toBeNull();
  expect(toUsd('100', 'XXX')).toBeNull(); // no rate: NULL, as the SQL's LEFT JOIN gives
  expect(exampleTransform.transform([{ id: '7', currency: 'GBP', amount_cents: '200' }])).toEqual([{ id: '7', currency: 'GBP', amount_usd: '2.53' }]);
});

test('the example bundles without the engine inside it, and runs from its bundle', async () => {
  const artifact = bundleTransform(path.join(EXAMPLES, 'transforms', 'orders-usd.ts'));
  expect(artifact.inputs).toEqual(['orders-usd.ts']);
  expect(artifact.code).toContain('require("@pgbackfill/backfill/transform")');
  const loaded = evaluateArtifact(artifact, 'examples/transforms/orders-usd.ts');
  expect(await loaded.transform([{ id: '1', currency: 'CHF', amount_cents: '1000' }])).toEqual([{ id: '1', currency: 'CHF', amount_usd: '11.28' }]);
});
