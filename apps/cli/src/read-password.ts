import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { CommandFailedError, UsageError } from './cli-command';

/**
 * The password of `--password-stdin`, which keeps it out of argv (`ps`, /proc/<pid>/cmdline and
 * shell history show arguments). On a terminal it is asked for twice without echo; otherwise it
 * is all of stdin less one trailing newline, so `printf %s "$PW" |`, `echo "$PW" |` and `< file`
 * all give the same password.
 */
export async function readPassword(
  input: NodeJS.ReadStream = process.stdin,
  prompt: NodeJS.WritableStream = process.stderr,
): Promise<string> {
  return input.isTTY ? askTwice(input, prompt) : readOneLine(input);
}

async function readOneLine(input: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  input.setEncoding('utf8');
  for await (const chunk of input) text += chunk as string;
  const password = text.replace(/\r?\n$/, '');
  if (/[\r\n]/.test(password)) throw new UsageError('--password-stdin takes one line, but stdin holds several');
  return password;
}

async function askTwice(input: NodeJS.ReadStream, prompt: NodeJS.WritableStream): Promise<string> {
  // readline echoes what is typed to its output: give it one that shows nothing. It puts the
  // terminal in raw mode (no echo by the terminal either) here, before the first prompt appears.
  const rl = createInterface({
    input,
    output: new Writable({ write: (_chunk, _encoding, done) => done() }),
    terminal: true,
  });
  let fail: ((err: Error) => void) | undefined;
  rl.on('SIGINT', () => {
    prompt.write('\n');
    fail?.(new CommandFailedError('Cancelled', 130));
  });
  rl.on('close', () => fail?.(new UsageError('--password-stdin: no password given')));
  const ask = (label: string) =>
    new Promise<string>((resolve, reject) => {
      fail = reject;
      prompt.write(label);
      rl.question('', (answer) => {
        prompt.write('\n');
        resolve(answer);
      });
    });
  try {
    const password = await ask('Password: ');
    if ((await ask('Password again: ')) !== password) throw new UsageError('The two passwords differ');
    return password;
  } finally {
    fail = undefined;
    rl.close();
  }
}
