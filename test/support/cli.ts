import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const MAIN = join(__dirname, '../../apps/cli/src/main.ts');

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `npm run cli -- <args>` (from source) on a data directory, as an operator would. */
export async function runCli(dataDir: string, args: readonly string[], timeoutMs = 60_000): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['-r', '@swc-node/register', MAIN, ...args], {
      env: { ...process.env, DATA_DIR: dataDir, EVENT_STORE: 'sqlite', LOG_LEVEL: 'warn' },
      timeout: timeoutMs,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? String(err) };
  }
}
