import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataDirLockedError, type DataDirLock, lockDataDir } from './data-dir-lock';

describe('lockDataDir', () => {
  let root: string;
  const held: DataDirLock[] = [];
  const lock = (dir: string) => {
    const l = lockDataDir(dir);
    held.push(l);
    return l;
  };
  const refusal = (dir: string): DataDirLockedError => {
    try {
      lock(dir);
    } catch (err) {
      if (err instanceof DataDirLockedError) return err;
      throw err;
    }
    throw new Error(`${dir} was locked twice`);
  };
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'data-dir-lock-'));
  });
  afterEach(() => {
    for (const l of held.splice(0)) l.release();
    rmSync(root, { recursive: true, force: true });
  });

  it("refuses a second holder of one DATA_DIR, naming the directory and the holder's pid; other DATA_DIRs are free", () => {
    const dir = join(root, 'data');
    lock(dir);
    const err = refusal(dir);
    expect(err.message).toBe(
      `DATA_DIR ${dir} is in use by another service process (pid ${process.pid}): one service process per DATA_DIR. ` +
        'Stop that process first, or give this one a DATA_DIR of its own.',
    );
    expect(err.holderPid).toBe(process.pid);
    expect(() => lock(join(root, 'other'))).not.toThrow();
  });

  it('is free again once released (a restart on the same DATA_DIR), and release removes the pid file', () => {
    const dir = join(root, 'data');
    const first = lock(dir);
    expect(readFileSync(join(dir, 'service.pid'), 'utf8')).toBe(`${process.pid}\n`);
    first.release();
    first.release();
    expect(existsSync(join(dir, 'service.pid'))).toBe(false);
    expect(() => lock(dir)).not.toThrow();
  });

  describe('across processes', () => {
    let child: ChildProcess | undefined;
    afterEach(async () => {
      if (child && child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await once(child, 'exit');
      }
    });

    /** Runs `then` in a child process after it tried lockDataDir(dir); its stdout is the first line it writes. */
    async function lockInChild(dir: string, then: string): Promise<{ proc: ChildProcess; stdout: string }> {
      const lockIt = `require(${JSON.stringify(join(__dirname, 'data-dir-lock.ts'))}).lockDataDir(${JSON.stringify(dir)})`;
      const code = `try { ${lockIt}; } catch (e) { process.stdout.write(e.message + '\\n'); process.exit(3); } ${then}`;
      const proc = spawn(process.execPath, ['-r', '@swc-node/register', '-e', code], {
        cwd: join(__dirname, '../../..'),
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      child = proc;
      const timeout = setTimeout(() => proc.kill('SIGKILL'), 20_000);
      try {
        const [out] = (await Promise.race([once(proc.stdout, 'data'), once(proc, 'exit')])) as [Buffer | number | null];
        return { proc, stdout: out instanceof Buffer ? out.toString() : '' };
      } finally {
        clearTimeout(timeout);
      }
    }

    it('refuses while another process holds it, even after a refused attempt here; a SIGKILLed holder leaves no lock', async () => {
      const dir = join(root, 'data');
      const { proc, stdout } = await lockInChild(
        dir,
        `process.stdout.write('locked\\n'); setInterval(() => {}, 60_000);`,
      );
      expect(stdout).toBe('locked\n');
      expect(refusal(dir).holderPid).toBe(proc.pid);
      // POSIX drops all of a process's locks on a file when it closes any descriptor of it; the
      // refused attempt above opened and closed one, and the holder must be unaffected.
      expect(refusal(dir).holderPid).toBe(proc.pid);

      proc.kill('SIGKILL');
      await once(proc, 'exit');
      // Its pid file stays behind; the lock does not.
      expect(existsSync(join(dir, 'service.pid'))).toBe(true);
      expect(() => lock(dir)).not.toThrow();
      expect(readFileSync(join(dir, 'service.pid'), 'utf8')).toBe(`${process.pid}\n`);
    }, 30_000);

    it('refuses another process while this one holds it', async () => {
      const dir = join(root, 'data');
      lock(dir);
      const { proc, stdout } = await lockInChild(dir, `process.stdout.write('locked\\n');`);
      expect(stdout).toContain(`DATA_DIR ${dir} is in use by another service process (pid ${process.pid})`);
      if (proc.exitCode === null) await once(proc, 'exit');
      expect(proc.exitCode).toBe(3);
    }, 30_000);
  });
});
