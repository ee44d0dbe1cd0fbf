/**
 * The Temporal codec-server protocol over the project's payload codec, so the Web UI and the
 * `temporal` CLI can show encrypted payloads (summaries, details, current details, queries,
 * errors) to whoever may reach this server, while Temporal keeps storing only ciphertext.
 *
 * POST …/encode and …/decode (only the last part of the path counts, so it can be mounted at
 * any depth) take and return `{"payloads": [...]}` in protobuf's JSON form: metadata values and
 * data base64. Browsers may call it only from the listed UI origins (CORS, credentials
 * allowed, since the UI can pass its access token); with a token set, every request must carry
 * `Authorization: Bearer <token>`.
 */
import { timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Payload, PayloadCodec } from '@temporalio/common';

export interface CodecServerOptions {
  host: string;
  /** 0: any free port. */
  port: number;
  /** Origins of the Web UIs allowed to call it from a browser, e.g. http://127.0.0.1:8233. */
  uiOrigins: string[];
  /** When set, requests need `Authorization: Bearer <token>`. */
  token?: string;
}

export interface RunningCodecServer {
  /** The endpoint to give the Web UI (`--ui-codec-endpoint`, TEMPORAL_CODEC_ENDPOINT) and the temporal CLI (`--codec-endpoint`). */
  url: string;
  close(): Promise<void>;
}

interface JsonPayload {
  metadata?: Record<string, string> | null;
  data?: string | null;
}

/** A request body bigger than this is refused: a workflow's payloads are limited to a few MB by Temporal itself. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

export function startCodecServer(codec: PayloadCodec, options: CodecServerOptions): Promise<RunningCodecServer> {
  const server = http.createServer((req, res) => {
    handle(codec, options, req, res).catch((err: Error) => reply(res, 500, { message: err.message }));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      const { port } = server.address() as AddressInfo;
      const host = options.host.includes(':') ? `[${options.host}]` : options.host;
      resolve({ url: `http://${host}:${port}`, close: () => new Promise((done) => server.close(() => done())) });
    });
  });
}

async function handle(codec: PayloadCodec, options: CodecServerOptions, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const origin = req.headers.origin;
  if (origin && options.uiOrigins.includes(origin)) {
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Access-Control-Allow-Credentials', 'true');
    res.setHeader('Access-Control-Allow-Headers', 'Content-Type, X-Namespace, Authorization');
    res.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
  }
  res.setHeader('Vary', 'Origin');
  if (req.method === 'OPTIONS') return reply(res, origin && options.uiOrigins.includes(origin) ? 204 : 403);
  const action = (req.url ?? '').split('?')[0].split('/').pop();
  if (req.method !== 'POST' || (action !== 'encode' && action !== 'decode')) return reply(res, 404, { message: 'POST …/encode or …/decode' });
  if (options.token && !authorized(req.headers.authorization, options.token)) return reply(res, 401, { message: 'Authorization: Bearer <token> required' });
  let body: { payloads?: JsonPayload[] };
  try {
    body = JSON.parse(await readBody(req)) as { payloads?: JsonPayload[] };
  } catch (err) {
    return reply(res, 400, { message: `the body must be {"payloads": [...]} as JSON: ${(err as Error).message}` });
  }
  if (!Array.isArray(body.payloads)) return reply(res, 400, { message: 'the body must be {"payloads": [...]}' });
  const payloads = body.payloads.map(fromJson);
  try {
    const done = action === 'encode' ? await codec.encode(payloads) : await codec.decode(payloads);
    reply(res, 200, { payloads: done.map(toJson) });
  } catch (err) {
    // a payload sealed with a key this server does not hold: say so, as the UI shows it
    reply(res, 400, { message: (err as Error).message });
  }
}

function authorized(header: string | undefined, token: string): boolean {
  const expected = Buffer.from(`Bearer ${token}`);
  const given = Buffer.from(header ?? '');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (part: Buffer) => {
      size += part.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error(`larger than ${MAX_BODY_BYTES} bytes`));
        req.destroy();
      } else parts.push(part);
    });
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

function reply(res: http.ServerResponse, status: number, body?: unknown): void {
  if (res.headersSent) return;
  if (body === undefined) {
    res.writeHead(status).end();
    return;
  }
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
}

function fromJson({ metadata, data }: JsonPayload): Payload {
  return {
    metadata: Object.fromEntries(Object.entries(metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
    data: data ? Buffer.from(data, 'base64') : undefined,
  };
}

function toJson({ metadata, data }: Payload): JsonPayload {
  return {
    metadata: Object.fromEntries(Object.entries(metadata ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
    ...(data ? { data: Buffer.from(data).toString('base64') } : {}),
  };
}
