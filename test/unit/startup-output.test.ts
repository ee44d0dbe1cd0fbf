import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { logEnd, outputSince, StartupOutput } from '../../src/dev/startup-output';

describe('what a dev server that died while starting said', () => {
  test('a Go panic keeps its first line, not only the stack that ends in main.main', () => {
    const out = new StartupOutput();
    out.add('time=2026-12-06T17:15:20Z level=ERROR msg="Failed to start gRPC listener" error="listen tcp 127.0.0.1:41234: bind: address already in use"\n');
    out.add('panic: runtime error: invalid memory address or nil pointer dereference\n');
    for (let i = 0; i < 400; i++) out.add(`\tgo.temporal.io/server/common/frame${i}.go:${i} +0x1${i}\n`);
    out.add('main.main()\n\t/root/go/pkg/mod/github.com/temporalio/cli@v1.5.1/cmd/temporal/main.go:18 +0x96\n');
    const reason = out.reason();
    expect(reason).toContain('address already in use');
    expect(reason).toContain('panic: runtime error');
    expect(reason).toContain('main.go:18'); // and where it ended
  });

  test('output split across chunks mid-line is read as whole lines', () => {
    const out = new StartupOutput();
    out.add('Error: failed starting server: listen tcp 127.0.0.1:7');
    out.add('233: bind: address already in use\n');
    expect(out.reason()).toBe('Error: failed starting server: listen tcp 127.0.0.1:7233: bind: address already in use');
  });

  test('a silent exit says so', () => {
    expect(new StartupOutput().reason()).toBe('it printed nothing');
  });
});

describe('what a server that logs to a file said since it was started', () => {
  test("only what this start wrote counts: an earlier start's taken port in the same log is not this one's", () => {
    const log = path.join(mkdtempSync(path.join(os.tmpdir(), 'startup-output-')), 'server.log');
    writeFileSync(log, '{"level":"fatal","msg":"listen tcp 127.0.0.1:7233: bind: address already in use"}\n');
    const start = logEnd(log);
    appendFileSync(log, '{"level":"error","msg":"unable to connect to the database"}\n');
    expect(outputSince(log, start).reason()).toBe('{"level":"error","msg":"unable to connect to the database"}');
  });

  test('a log not yet written reads as nothing said', () => {
    const log = path.join(mkdtempSync(path.join(os.tmpdir(), 'startup-output-')), 'server.log');
    expect(logEnd(log)).toBe(0);
    expect(outputSince(log, 0).reason()).toBe('it printed nothing');
  });
});
