import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = join(__dirname, '../..');
const MAIN = join(ROOT, 'apps/cli/src/main.ts');

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI of `npm run cli -- <args>` from source (no npm, no build) on a data directory. */
export async function runCli(dataDir: string, args: readonly string[], timeoutMs = 60_000): Promise<CliResult> {
  return settle(run(process.execPath, ['-r', '@swc-node/register', MAIN, ...args], options(dataDir, timeoutMs)));
}

/**
 * Runs `npm run cli -- <args>` itself, as an operator types it: npm, its precli (`nest build cli`,
 * some 15 s) and the built CLI in dist/. One at a time: each build replaces dist/apps/cli.
 */
export async function runNpmCli(dataDir: string, args: readonly string[], timeoutMs = 180_000): Promise<CliResult> {
  return settle(run('npm', ['run', 'cli', '--', ...args], { ...options(dataDir, timeoutMs), cwd: ROOT }));
}

function options(dataDir: string, timeoutMs: number) {
  return {
    env: { ...process.env, DATA_DIR: dataDir, EVENT_STORE: 'sqlite', LOG_LEVEL: 'warn' },
    timeout: timeoutMs,
    maxBuffer: 64 * 1024 * 1024,
  };
}

async function settle(child: Promise<{ stdout: string; stderr: string }>): Promise<CliResult> {
  try {
    const { stdout, stderr } = await child;
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? String(err) };
  }
}
