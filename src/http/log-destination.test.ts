// The default log destination loses no line: lines waiting for the end of their event-loop turn
// are written out when the process exits at once, and pino's flush writes them out on demand.
// Each case runs in a child process, whose stdout is the destination's.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';

const destination = path.resolve(import.meta.dirname, 'log-destination.ts');

function run(script: string): { stdout: string; status: number | null } {
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(result.stderr.replace(/^npm warn.*\n/gm, ''), '');
  return { stdout: result.stdout, status: result.status };
}

const lines = (n: number) => Array.from({ length: n }, (_, i) => `{"line":${i}}\n`);

describe('the stdout log destination', () => {
  // A few lines (less than sonic-boom writes at once) and many.
  for (const count of [3, 5000]) {
    it(`writes out every line when the process exits in the turn of the writes (${count} lines)`, () => {
      const { stdout, status } = run(`
        import { stdoutLogDestination } from ${JSON.stringify(destination)};
        const out = stdoutLogDestination();
        for (let i = 0; i < ${count}; i++) out.write('{"line":' + i + '}\\n');
        process.exit(3);
      `);
      assert.equal(status, 3);
      assert.equal(stdout, lines(count).join(''));
    });
  }

  it('keeps the order of lines written across turns, and flushes them on demand', () => {
    const { stdout } = run(`
      import { stdoutLogDestination } from ${JSON.stringify(destination)};
      const out = stdoutLogDestination();
      let i = 0;
      const burst = () => { for (let n = 0; n < 500; n++) out.write('{"line":' + i++ + '}\\n'); };
      burst();
      setImmediate(() => { burst(); setTimeout(() => { burst(); out.flush(() => process.stdout.write('flushed\\n')); }, 5); });
    `);
    assert.equal(stdout, lines(1500).join('') + 'flushed\n');
  });

  it('is one destination per process, however many servers ask for it', () => {
    const { stdout } = run(`
      import { stdoutLogDestination } from ${JSON.stringify(destination)};
      const first = stdoutLogDestination();
      const listeners = process.listenerCount('exit');
      const same = [1, 2, 3].every(() => stdoutLogDestination() === first);
      process.stdout.write(same + ' ' + (process.listenerCount('exit') - listeners) + '\\n');
    `);
    assert.equal(stdout, 'true 0\n');
  });
});
