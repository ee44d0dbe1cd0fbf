/**
 * Run ids: `YYYYMMDD-HHMM-` (UTC, so ids sort by start time in `list` and the Web UI) and 16
 * hex digits, 64 bits from the operating system's random source. Starts from a scheduler, many
 * a minute and from several hosts, do not collide: a million ids in one minute share one with
 * a chance of about 3 in 100 million. Ids of the older form (four hex digits) stay valid
 * everywhere, since both match RUN_ID_PATTERN. Node-only (crypto): workflows never make ids.
 */
import { randomFillSync } from 'node:crypto';

/** Bytes of chance in an id; 8 bytes = 64 bits. */
const RANDOM_BYTES = 8;

/**
 * OS randomness drawn 4 KiB at a time, each id taking bytes no other id took (as Node's own
 * randomUUID caches entropy): one system call per 512 ids instead of one per id.
 */
const pool = Buffer.alloc(512 * RANDOM_BYTES);
let used = pool.length;

function pooledRandomHex(bytes: number): string {
  if (used + bytes > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  used += bytes;
  return pool.toString('hex', used - bytes, used);
}

/** `random` returns `bytes` random bytes as hex (tests pass their own). */
export function newRunId(now: Date = new Date(), random: (bytes: number) => string = pooledRandomHex): string {
  const iso = now.toISOString(); // 2026-12-02T03:01:42.123Z
  const stamp = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}-${iso.slice(11, 13)}${iso.slice(14, 16)}`;
  return `${stamp}-${random(RANDOM_BYTES)}`;
}
