import { StartupOutput } from '../../src/dev/startup-output';

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
