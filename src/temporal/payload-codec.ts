/**
 * Optional encryption of everything the backfill puts into Temporal payloads — workflow and
 * activity inputs (specs, plans), results, heartbeats, memos, Web UI texts and, through the
 * failure converter, error messages — with AES-256-GCM. Temporal then stores only ciphertext:
 * whoever reads its database, its backups or its Web UI without the key sees nothing of the
 * spec. Search attributes stay readable (the server indexes them); they carry names, statuses
 * and counts only.
 *
 * Keys: BACKFILL_PAYLOAD_KEY (32 random bytes, base64; e.g. `openssl rand -base64 32`)
 * encrypts; BACKFILL_PAYLOAD_OLD_KEYS (comma-separated) only decrypts, for key rotation. Each
 * payload names its key by a fingerprint, never the key. Payloads written without the codec
 * still decode, so it can be turned on under running runs' old histories.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { ValueError, type Payload, type PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

const ENCODING = 'binary/encrypted';
const CIPHER = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface PayloadKeys {
  /** The key new payloads are encrypted with. */
  current: Buffer;
  /** Keys that may still be needed to read older payloads. */
  old: Buffer[];
}

export function keyFingerprint(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

/** The keys from the environment, or undefined when the codec is off; a malformed key is an error naming the variable. */
export function payloadKeysFromEnv(env: NodeJS.ProcessEnv = process.env): PayloadKeys | undefined {
  const current = env.BACKFILL_PAYLOAD_KEY;
  if (!current) {
    if (env.BACKFILL_PAYLOAD_OLD_KEYS) throw new Error('BACKFILL_PAYLOAD_OLD_KEYS is set without BACKFILL_PAYLOAD_KEY; set the current key too');
    return undefined;
  }
  const decode = (name: string, text: string) => {
    const key = Buffer.from(text.trim(), 'base64');
    if (key.length !== 32) throw new Error(`${name} must be 32 bytes, base64-encoded (got ${key.length} bytes); create one with: openssl rand -base64 32`);
    return key;
  };
  const old = (env.BACKFILL_PAYLOAD_OLD_KEYS ?? '')
    .split(',')
    .filter((s) => s.trim())
    .map((k) => decode('BACKFILL_PAYLOAD_OLD_KEYS', k));
  return { current: decode('BACKFILL_PAYLOAD_KEY', current), old };
}

export class AesGcmPayloadCodec implements PayloadCodec {
  private readonly currentId: string;
  private readonly byId: Map<string, Buffer>;

  constructor(private readonly keys: PayloadKeys) {
    this.currentId = keyFingerprint(keys.current);
    this.byId = new Map([keys.current, ...keys.old].map((k) => [keyFingerprint(k), k]));
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const plain = temporal.api.common.v1.Payload.encode(payload).finish();
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv(CIPHER, this.keys.current, iv);
      const sealed = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
      return {
        metadata: { encoding: Buffer.from(ENCODING), 'encryption-key-id': Buffer.from(this.currentId) },
        data: sealed,
      };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      if (Buffer.from(payload.metadata?.encoding ?? []).toString() !== ENCODING) return payload;
      const keyId = Buffer.from(payload.metadata?.['encryption-key-id'] ?? []).toString();
      const key = this.byId.get(keyId);
      if (!key) {
        throw new ValueError(`a payload is encrypted with key ${keyId}, which this process does not have; add it to BACKFILL_PAYLOAD_OLD_KEYS`);
      }
      const data = Buffer.from(payload.data ?? []);
      const decipher = createDecipheriv(CIPHER, key, data.subarray(0, IV_BYTES));
      decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
      const plain = Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]);
      return temporal.api.common.v1.Payload.decode(plain);
    });
  }
}
