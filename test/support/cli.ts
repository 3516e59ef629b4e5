import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './checkout';

const run = promisify(execFile);
const MAIN = join(ROOT, 'apps/cli/src/main.ts');

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI of `npm run cli -- <args>` from source (no npm, no build) on a data directory; `input` is its stdin, `env` added to the environment. */
export async function runCli(
  dataDir: string,
  args: readonly string[],
  timeoutMs = 60_000,
  input = '',
  env: NodeJS.ProcessEnv = {},
): Promise<CliResult> {
  const child = run(process.execPath, ['-r', '@swc-node/register', MAIN, ...args], options(dataDir, timeoutMs, env));
  child.child.stdin?.end(input);
  return settle(child);
}

/** The two ways an operator runs the built CLI in a checkout. */
export const OPERATOR_CLIS = { 'npm run cli': ['npm', 'run', 'cli', '--'], 'npx filing': ['npx', 'filing'] } as const;
export type OperatorCli = keyof typeof OPERATOR_CLIS;

/**
 * Runs `commandLine` (e.g. OPERATOR_CLIS['npx filing'] plus arguments, or `npm start`) in
 * `checkout` on a data directory. `npx` may not install anything (npm_config_yes=false): had it not
 * found the checkout's own bin, it would fetch a package named `filing` from the registry. npm's
 * cache, where npx links the checkout, is `npmCache`.
 */
export async function runInCheckout(
  checkout: string,
  npmCache: string,
  dataDir: string,
  commandLine: readonly string[],
  timeoutMs = 60_000,
  env: NodeJS.ProcessEnv = {},
): Promise<CliResult> {
  const [command, ...args] = commandLine;
  const child = run(command, args, {
    ...options(dataDir, timeoutMs, { npm_config_cache: npmCache, npm_config_yes: 'false', ...env }),
    cwd: checkout,
  });
  child.child.stdin?.end();
  return settle(child);
}

/**
 * Runs the CLI from source on a terminal (util-linux `script` gives it a pseudo-terminal) and
 * types each answer once its prompt has appeared (after the previous one). Returns all the
 * terminal showed: the prompts, stdout and stderr, and whatever the terminal echoed.
 */
export async function runCliOnTerminal(
  dataDir: string,
  args: readonly string[],
  answers: ReadonlyArray<{ readonly prompt: string; readonly type: string }>,
  timeoutMs = 60_000,
): Promise<{ code: number | null; output: string }> {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = [process.execPath, '-r', '@swc-node/register', MAIN, ...args].map(quote).join(' ');
  const { env } = options(dataDir, timeoutMs);
  const child = spawn('script', ['--quiet', '--return', '--flush', '--command', command, '/dev/null'], {
    env,
    cwd: ROOT,
    timeout: timeoutMs,
  });
  let output = '';
  let answered = 0;
  let from = 0;
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    for (let at; answered < answers.length && (at = output.indexOf(answers[answered].prompt, from)) >= 0; answered++) {
      from = at + answers[answered].prompt.length;
      child.stdin.write(`${answers[answered].type}\r`);
    }
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  child.stdin.end();
  return { code, output };
}

function options(dataDir: string, timeoutMs: number, env: NodeJS.ProcessEnv = {}) {
  return {
    env: { ...process.env, DATA_DIR: dataDir, EVENT_STORE: 'sqlite', LOG_LEVEL: 'warn', ...env },
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
