/**
 * With payload encryption on, the Temporal Web UI shows a run's summary and current details
 * only through `backfill codec-server`: a dev server whose UI is pointed at the codec server's
 * address (`--ui-codec-endpoint`), a run encrypted with BACKFILL_PAYLOAD_KEY, and headless
 * Chromium reading the run's page before the codec server is up (ciphertext) and after
 * (readable). Needs Chromium (CHROMIUM_PATH, default /usr/bin/chromium); CI installs it, and on a
 * machine without it this test is skipped with a warning instead of failing.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { freePort, startDevServer, type DevServer } from '../src/dev/temporal-server';
import { startRun, waitForResult } from '../src/operations';
import { startCodecServer } from '../src/temporal/codec-server';
import { connectClient } from '../src/temporal/connect';
import { AesGcmPayloadCodec } from '../src/temporal/payload-codec';
import { useTestEnvironment } from './helpers/environment';
import { ordersSpec, writeSpec } from './helpers/orders';
import { encryptedWorkflowBundle, startTestWorker, uniqueQueue } from './helpers/temporal';

const env = useTestEnvironment('codecui', { rows: 3000, worker: false });

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available && process.env.CI) throw new Error(`Chromium not found at ${CHROMIUM}; CI must install it (apt-get install chromium)`);
if (!available) process.stderr.write(`codec-server-ui.test.ts skipped: no Chromium at ${CHROMIUM} (set CHROMIUM_PATH)\n`);
const maybe = available ? test : test.skip;

const REASON = 'test: re-rate the customers of project kestrel';
let dev: DevServer | undefined;
let browser: Browser | undefined;

afterAll(async () => {
  await browser?.close();
  await dev?.stop();
});

/** The text of every frame of the run's User Metadata tab (the UI renders each Markdown block in its own frame). */
async function userMetadataText(page: Page, url: string, settled: (text: string) => boolean): Promise<string> {
  await page.goto(url);
  await page.getByText('User Metadata', { exact: true }).first().click({ timeout: 30_000 });
  const deadline = Date.now() + 20_000;
  for (;;) {
    const texts = await Promise.all(
      page.frames().map((f) =>
        f
          .locator('body')
          .innerText()
          .catch(() => ''),
      ),
    );
    const text = texts.join('\n');
    if (settled(text) || Date.now() > deadline) return text;
    await page.waitForTimeout(250);
  }
}

maybe(
  'the run summary and current details are ciphertext in the Web UI without the codec server, and readable through it',
  async () => {
    const payloadKeys = { current: randomBytes(32), old: [] };
    const codecPort = await freePort();
    const codecUrl = `http://127.0.0.1:${codecPort}`;
    dev = await startDevServer({ cliPath: process.env.TEMPORAL_CLI!, uiPort: 'any', logLevel: 'error', extraArgs: ['--ui-codec-endpoint', codecUrl] });
    const taskQueue = uniqueQueue('codec-ui');
    const worker = await startTestWorker(taskQueue, { temporal: { address: dev.address, payloadKeys }, bundle: await encryptedWorkflowBundle() });
    const sealed = await connectClient({ address: dev.address, namespace: 'default', payloadKeys });
    try {
      const spec = ordersSpec(env.db.envVar, { name: 'codec-ui', reason: REASON, partition: { by: 'range', column: 'id', size: 1000 } });
      const started = await startRun({ client: sealed.client, taskQueue }, { specFile: writeSpec(spec), actor: 'test' });
      const handle = sealed.client.workflow.getHandle(started.workflowId);
      expect((await waitForResult(handle)).status).toBe('succeeded');
      const runUrl = `${dev.uiUrl}/namespaces/default/workflows/${encodeURIComponent(started.workflowId)}/${(await handle.describe()).runId}/history`;
      const heading = `Backfill codec-ui / ${started.runId}: succeeded`;

      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
      });
      // the UI asks the codec address, where nothing answers yet: what it shows is what Temporal stores
      const without = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      // the UI says it could not decode (so it loaded the run and tried) and shows no summary
      const stored = await userMetadataText(without, runUrl, (t) => t.includes('Decoding failed') && t.includes('No summary available'));
      expect(stored).toContain('Codec Server could not connect');
      expect(stored).toContain('Decoding failed');
      expect(stored).not.toContain(heading);
      expect(stored).not.toContain(REASON);

      const codec = await startCodecServer(new AesGcmPayloadCodec(payloadKeys), { host: '127.0.0.1', port: codecPort, uiOrigins: [dev.uiUrl!] });
      try {
        const through = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
        const shown = await userMetadataText(through, runUrl, (t) => t.includes(heading) && t.includes(REASON));
        expect(shown).toContain(heading);
        expect(shown).toContain(REASON);
      } finally {
        await codec.close();
      }
    } finally {
      await worker.stop();
      await sealed.close();
    }
  },
  120_000,
);
