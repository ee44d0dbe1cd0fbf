import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { temporalConfig } from '../../src/temporal/config';
import { AesGcmPayloadCodec, keyFingerprint, payloadKeysFromEnv } from '../../src/temporal/payload-codec';

describe('Temporal connection settings, as the temporal CLI reads them', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bf-tls-'));
  for (const f of ['client.pem', 'client.key', 'ca.pem']) writeFileSync(path.join(dir, f), `-----${f}-----`);
  // no temporal.toml is read in these cases
  const base = { TEMPORAL_CONFIG_FILE: path.join(dir, 'absent.toml') };

  test('a plain local server by default', () => {
    expect(temporalConfig({ ...base })).toEqual({ address: '127.0.0.1:7233', namespace: 'default', taskQueue: 'backfill' });
  });

  test('mTLS from TEMPORAL_TLS_CERT / _KEY / _CA, the names most deployments use', () => {
    const config = temporalConfig({
      ...base,
      TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233',
      TEMPORAL_NAMESPACE: 'ns.acct',
      TEMPORAL_TLS_CERT: path.join(dir, 'client.pem'),
      TEMPORAL_TLS_KEY: path.join(dir, 'client.key'),
      TEMPORAL_TLS_CA: path.join(dir, 'ca.pem'),
      TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
    });
    expect(config.address).toBe('ns.acct.tmprl.cloud:7233');
    expect(config.namespace).toBe('ns.acct');
    expect(config.connection).toEqual({
      tls: {
        serverNameOverride: 'temporal.internal',
        serverRootCACertificate: Buffer.from('-----ca.pem-----'),
        clientCertPair: { crt: Buffer.from('-----client.pem-----'), key: Buffer.from('-----client.key-----') },
      },
    });
  });

  test('an API key implies TLS unless TEMPORAL_TLS=false says otherwise', () => {
    expect(temporalConfig({ ...base, TEMPORAL_API_KEY: 'k' }).connection).toEqual({ apiKey: 'k', tls: true });
    expect(temporalConfig({ ...base, TEMPORAL_API_KEY: 'k', TEMPORAL_TLS: 'false' }).connection).toEqual({ apiKey: 'k', tls: false });
  });

  test('an unreadable certificate path is an error naming where to look', () => {
    expect(() => temporalConfig({ ...base, TEMPORAL_TLS_CERT: path.join(dir, 'nope.pem'), TEMPORAL_TLS_KEY: path.join(dir, 'client.key') })).toThrow(
      /^the Temporal connection settings cannot be read: .*nope\.pem.*; check TEMPORAL_TLS\*, TEMPORAL_PROFILE and TEMPORAL_CONFIG_FILE \(docs\/configuration\.md\)$/,
    );
  });
});

describe('payload encryption', () => {
  const key = randomBytes(32);
  const payload = { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('{"table":"app.customers"}') };

  test('round-trips, and what Temporal stores reveals nothing of the payload', async () => {
    const codec = new AesGcmPayloadCodec({ current: key, old: [] });
    const [sealed] = await codec.encode([payload]);
    expect(Buffer.from(sealed.data!).toString('latin1')).not.toContain('customers');
    expect(Buffer.from(sealed.metadata!['encryption-key-id']!).toString()).toBe(keyFingerprint(key));
    const [opened] = await codec.decode([sealed]);
    expect(Buffer.from(opened.data!).toString()).toBe('{"table":"app.customers"}');
    expect(Buffer.from(opened.metadata!.encoding!).toString()).toBe('json/plain');
  });

  test('decodes with an old key after rotation, passes unencrypted payloads through, refuses tampering and unknown keys', async () => {
    const [sealed] = await new AesGcmPayloadCodec({ current: key, old: [] }).encode([payload]);
    const rotated = new AesGcmPayloadCodec({ current: randomBytes(32), old: [key] });
    expect(Buffer.from((await rotated.decode([sealed]))[0].data!).toString()).toContain('customers');
    expect(await rotated.decode([payload])).toEqual([payload]);
    const tampered = { ...sealed, data: Buffer.from(sealed.data!).map((b, i) => (i === 20 ? b ^ 1 : b)) };
    await expect(rotated.decode([tampered])).rejects.toThrow(/auth/i);
    await expect(new AesGcmPayloadCodec({ current: randomBytes(32), old: [] }).decode([sealed])).rejects.toThrow(
      `a payload is encrypted with key ${keyFingerprint(key)}, which this process does not have; add it to BACKFILL_PAYLOAD_OLD_KEYS`,
    );
  });

  test('keys come from BACKFILL_PAYLOAD_KEY; a malformed one says how to make one', () => {
    expect(payloadKeysFromEnv({})).toBeUndefined();
    expect(payloadKeysFromEnv({ BACKFILL_PAYLOAD_KEY: key.toString('base64') })).toEqual({ current: key, old: [] });
    expect(() => payloadKeysFromEnv({ BACKFILL_PAYLOAD_KEY: 'c2hvcnQ=' })).toThrow(
      'BACKFILL_PAYLOAD_KEY must be 32 bytes, base64-encoded (got 5 bytes); create one with: openssl rand -base64 32',
    );
  });
});
