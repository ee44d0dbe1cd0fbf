import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkModulePath } from '../../src/security/module-origin';
import { databaseAllowed, workerTrustFromEnv } from '../../src/security/worker-trust';

describe('the database allow-list', () => {
  test('defaults to DATABASE_URL alone', () => {
    const trust = workerTrustFromEnv({}, '/srv/app');
    expect(trust.databases).toEqual(['DATABASE_URL']);
    expect(databaseAllowed(trust, 'DATABASE_URL')).toBe(true);
    expect(databaseAllowed(trust, 'HOME')).toBe(false);
    expect(databaseAllowed(trust, 'DATABASE_URL_2')).toBe(false);
  });

  test('takes names and NAME_* families from BACKFILL_DATABASES', () => {
    const trust = workerTrustFromEnv({ BACKFILL_DATABASES: ' DATABASE_URL, REPORTING_* ,' });
    expect(trust.databases).toEqual(['DATABASE_URL', 'REPORTING_*']);
    expect(databaseAllowed(trust, 'REPORTING_EU')).toBe(true);
    expect(databaseAllowed(trust, 'REPORTING')).toBe(false);
    expect(databaseAllowed(trust, 'PATH')).toBe(false);
  });
});

describe('transform directories', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'bf-trust-'));
  const allowed = path.join(root, 'transforms');
  const other = path.join(root, 'transforms-evil');
  mkdirSync(allowed);
  mkdirSync(other);
  writeFileSync(path.join(allowed, 'ok.ts'), '');
  writeFileSync(path.join(other, 'evil.ts'), '');
  symlinkSync(path.join(other, 'evil.ts'), path.join(allowed, 'link.ts'));
  const trust = workerTrustFromEnv({ BACKFILL_TRANSFORM_DIRS: 'transforms' }, root);

  test('resolve relative to the worker directory and default to it', () => {
    expect(trust.transformDirs).toEqual([allowed]);
    expect(workerTrustFromEnv({}, root).transformDirs).toEqual([root]);
  });

  test('admit modules under them only', () => {
    expect(checkModulePath(trust, path.join(allowed, 'ok.ts'))).toEqual({ ok: true, path: path.join(allowed, 'ok.ts') });
    // a sibling whose name starts like the directory is not inside it
    expect(checkModulePath(trust, path.join(other, 'evil.ts'))).toMatchObject({ ok: false });
    expect(checkModulePath(trust, path.join(allowed, '..', 'transforms-evil', 'evil.ts'))).toMatchObject({ ok: false });
    expect(checkModulePath(trust, path.join(allowed, 'link.ts'))).toMatchObject({ ok: false });
    expect(checkModulePath(trust, allowed)).toMatchObject({ ok: false });
    expect(checkModulePath(trust, path.join(allowed, 'missing.ts'))).toEqual({
      ok: false,
      message: `transform module ${path.join(allowed, 'missing.ts')} does not exist on this worker; deploy it there`,
    });
  });
});
