/**
 * The codec server speaks Temporal's codec protocol over the payload codec: what /encode seals,
 * /decode opens, byte for byte, in protobuf's JSON form; browsers are let in from the listed
 * Web UI origins only; with a token, nothing is answered without it.
 */
import { randomBytes } from 'node:crypto';
import { startCodecServer, type RunningCodecServer } from '../../src/temporal/codec-server';
import { AesGcmPayloadCodec } from '../../src/temporal/payload-codec';

const UI = 'http://127.0.0.1:8233';
const TOKEN = 'a-token-of-enough-length';
const codec = new AesGcmPayloadCodec({ current: randomBytes(32), old: [] });
let open: RunningCodecServer;
let guarded: RunningCodecServer;

beforeAll(async () => {
  open = await startCodecServer(codec, { host: '127.0.0.1', port: 0, uiOrigins: [UI] });
  guarded = await startCodecServer(codec, { host: '127.0.0.1', port: 0, uiOrigins: [UI], token: TOKEN });
});
afterAll(async () => {
  await open.close();
  await guarded.close();
});

const b64 = (text: string) => Buffer.from(text).toString('base64');
const plain = { metadata: { encoding: b64('json/plain') }, data: b64('{"heading":"Backfill orders-usd: running"}') };

function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Namespace': 'default', ...headers }, body: JSON.stringify(body) });
}

test('encode seals a payload, decode opens it to the same bytes, under any path prefix', async () => {
  const sealed = await post(`${open.url}/default/encode`, { payloads: [plain] });
  expect(sealed.status).toBe(200);
  const { payloads } = (await sealed.json()) as { payloads: { metadata: Record<string, string>; data: string }[] };
  expect(Buffer.from(payloads[0].metadata.encoding, 'base64').toString()).toBe('binary/encrypted');
  expect(Buffer.from(payloads[0].data, 'base64').toString()).not.toContain('Backfill');
  const opened = await post(`${open.url}/some/prefix/decode`, { payloads });
  expect(await opened.json()).toEqual({ payloads: [plain] });
  // a payload that was never encrypted passes through decode unchanged
  expect(await (await post(`${open.url}/decode`, { payloads: [plain] })).json()).toEqual({ payloads: [plain] });
});

test('a payload sealed with another key is refused with the reason', async () => {
  const other = new AesGcmPayloadCodec({ current: randomBytes(32), old: [] });
  const [foreign] = await other.encode([{ metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"x"') }]);
  const json = {
    metadata: Object.fromEntries(Object.entries(foreign.metadata!).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
    data: Buffer.from(foreign.data!).toString('base64'),
  };
  const res = await post(`${open.url}/decode`, { payloads: [json] });
  expect(res.status).toBe(400);
  expect(((await res.json()) as { message: string }).message).toMatch(/key/i);
});

test('CORS: the listed Web UI origin is let in, with credentials; another origin is not', async () => {
  const preflight = await fetch(`${open.url}/decode`, {
    method: 'OPTIONS',
    headers: { Origin: UI, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type,x-namespace' },
  });
  expect(preflight.status).toBe(204);
  expect(preflight.headers.get('access-control-allow-origin')).toBe(UI);
  expect(preflight.headers.get('access-control-allow-credentials')).toBe('true');
  expect(preflight.headers.get('access-control-allow-headers')).toMatch(/X-Namespace/);
  const stranger = await fetch(`${open.url}/decode`, {
    method: 'OPTIONS',
    headers: { Origin: 'https://evil.example.com', 'Access-Control-Request-Method': 'POST' },
  });
  expect(stranger.status).toBe(403);
  expect(stranger.headers.get('access-control-allow-origin')).toBeNull();
  const answered = await post(`${open.url}/decode`, { payloads: [plain] }, { Origin: 'https://evil.example.com' });
  expect(answered.headers.get('access-control-allow-origin')).toBeNull();
});

test('with a token, a request without it or with another is refused; with it, answered', async () => {
  expect((await post(`${guarded.url}/decode`, { payloads: [plain] })).status).toBe(401);
  expect((await post(`${guarded.url}/decode`, { payloads: [plain] }, { Authorization: 'Bearer wrong-token-of-enough-len' })).status).toBe(401);
  const ok = await post(`${guarded.url}/decode`, { payloads: [plain] }, { Authorization: `Bearer ${TOKEN}` });
  expect(ok.status).toBe(200);
});

test('anything else: 404 for other paths and methods, 400 for a body that is not payloads', async () => {
  expect((await post(`${open.url}/transcode`, { payloads: [] })).status).toBe(404);
  expect((await fetch(`${open.url}/decode`)).status).toBe(404);
  expect((await post(`${open.url}/decode`, { items: [] })).status).toBe(400);
  const bad = await fetch(`${open.url}/decode`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{not json' });
  expect(bad.status).toBe(400);
});
