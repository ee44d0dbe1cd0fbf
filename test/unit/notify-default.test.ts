/** BACKFILL_NOTIFY: a worker-wide notify: list, read at the worker's start; a bad one stops it, saying why. */
import { notifyDefaultFromEnv } from '../../src/notify/worker-default';

test('unset or empty: none; a JSON list of targets: those; not JSON, or a list the schema refuses: an error naming the variable', () => {
  expect(notifyDefaultFromEnv({})).toBeUndefined();
  expect(notifyDefaultFromEnv({ BACKFILL_NOTIFY: ' ' })).toBeUndefined();
  expect(notifyDefaultFromEnv({ BACKFILL_NOTIFY: '[{"channel": "ops_events", "events": ["failed"]}]' })).toEqual([
    { channel: 'ops_events', events: ['failed'] },
  ]);
  expect(() => notifyDefaultFromEnv({ BACKFILL_NOTIFY: 'https://hooks.example.com' })).toThrow(
    /^BACKFILL_NOTIFY is not JSON .*: give the targets as a spec's notify: list/,
  );
  expect(() => notifyDefaultFromEnv({ BACKFILL_NOTIFY: '[{"webhook": "ftp://x"}]' })).toThrow(/^BACKFILL_NOTIFY: .*http\(s\) URL/);
  expect(() => notifyDefaultFromEnv({ BACKFILL_NOTIFY: '[{"channel": "ops", "events": ["exploded"]}]' })).toThrow(
    /^BACKFILL_NOTIFY: 0\.events\.0 must be some of started, held/,
  );
  expect(() => notifyDefaultFromEnv({ BACKFILL_NOTIFY: '[{"channel": "ops", "webhook": "https://x.example"}]' })).toThrow(
    /0 names one target: webhook: URL, or channel: name/,
  );
  expect(() => notifyDefaultFromEnv({ BACKFILL_NOTIFY: '[{"channel": "ops", "format": "chat"}]' })).toThrow(/0\.format is for a webhook/);
});
