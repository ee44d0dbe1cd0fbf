import { envSettings } from '../../src/util/env-settings';

describe('settings from the environment', () => {
  test('defaults when unset or empty; values as given when valid', () => {
    expect(envSettings({})).toEqual({
      BACKFILL_MAX_ACTIVITIES: 20,
      TEMPORAL_UI_PORT: 8233,
      BACKFILL_PG_PORT: 54329,
      LOG_LEVEL: 'info',
      BACKFILL_REQUIRE_LEAST_PRIVILEGE: false,
      BACKFILL_DEPLOYMENT_NAME: 'backfill',
      BACKFILL_VERSIONING_BEHAVIOR: 'pinned',
    });
    expect(envSettings({ BACKFILL_MAX_ACTIVITIES: ' ', LOG_LEVEL: '' })).toMatchObject({ BACKFILL_MAX_ACTIVITIES: 20, LOG_LEVEL: 'info' });
    expect(
      envSettings({
        BACKFILL_MAX_ACTIVITIES: '8',
        TEMPORAL_UI_PORT: '18233',
        LOG_LEVEL: 'warn',
        BACKFILL_METRICS_ADDRESS: '0.0.0.0:9464',
        BACKFILL_REQUIRE_LEAST_PRIVILEGE: '1',
      }),
    ).toMatchObject({
      BACKFILL_REQUIRE_LEAST_PRIVILEGE: true,
      BACKFILL_MAX_ACTIVITIES: 8,
      TEMPORAL_UI_PORT: 18233,
      LOG_LEVEL: 'warn',
      BACKFILL_METRICS_ADDRESS: '0.0.0.0:9464',
    });
  });

  test.each([
    [{ BACKFILL_MAX_ACTIVITIES: '2O' }, 'BACKFILL_MAX_ACTIVITIES="2O" must be a whole number'],
    [{ BACKFILL_MAX_ACTIVITIES: '0' }, 'BACKFILL_MAX_ACTIVITIES="0" must be between 1 and 1000'],
    [{ BACKFILL_MAX_ACTIVITIES: '-4' }, 'BACKFILL_MAX_ACTIVITIES="-4" must be a whole number'],
    [{ TEMPORAL_UI_PORT: '70000' }, 'TEMPORAL_UI_PORT="70000" must be between 1 and 65535'],
    [{ LOG_LEVEL: 'verbose' }, 'LOG_LEVEL="verbose" must be one of fatal, error, warn, info, debug, trace, silent'],
    [{ BACKFILL_METRICS_ADDRESS: '9464' }, 'BACKFILL_METRICS_ADDRESS="9464" must be host:port, such as 0.0.0.0:9464'],
    [{ BACKFILL_BUILD_ID: 'v1 2' }, 'BACKFILL_BUILD_ID="v1 2" must be letters, digits, dots, dashes or underscores (a git sha, a release tag)'],
    [{ BACKFILL_VERSIONING_BEHAVIOR: 'sticky' }, 'BACKFILL_VERSIONING_BEHAVIOR="sticky" must be pinned or auto-upgrade'],
    [{ BACKFILL_REQUIRE_LEAST_PRIVILEGE: 'yes' }, 'BACKFILL_REQUIRE_LEAST_PRIVILEGE="yes" must be 1 (refuse a superuser or BYPASSRLS connection) or 0'],
  ])('%j is refused, naming the variable, its value and what it takes', (env, message) => {
    expect(() => envSettings(env)).toThrow(message);
    expect(() => envSettings(env)).toThrow('(docs/configuration.md)');
  });

  test('every problem at once', () => {
    expect(() => envSettings({ BACKFILL_MAX_ACTIVITIES: 'x', LOG_LEVEL: 'loud' })).toThrow(/BACKFILL_MAX_ACTIVITIES="x" .*; LOG_LEVEL="loud"/);
  });
});
