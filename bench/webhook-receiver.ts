/**
 * The webhook benchmark's receiver, run as a child process (`fork`) so its TLS and HTTP work do
 * not take the service's core: a real receiver is another machine. HTTPS on `RECEIVER_PORTS`
 * ports (one origin per endpoint, as distinct receivers would be), answering 204 at once. It
 * records the first receipt of each `<path> <webhook-id>` (epoch ms, the parent's clock too).
 *
 * IPC: `{ expect: n }` starts a count (forgetting earlier receipts) and is answered `{ reached }`
 * once n distinct keys arrived; `{ times: true }` is answered with every receipt. `{ hold: true }`
 * leaves every request unanswered (an endpoint that has stopped responding; receipts still count)
 * until `{ release: true }`, which answers them and then answers at once again.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';

const cert = readFileSync(process.env.RECEIVER_CERT ?? '', 'utf8');
const key = readFileSync(process.env.RECEIVER_KEY ?? '', 'utf8');
const ports = Number(process.env.RECEIVER_PORTS ?? 1);
const send = (message: unknown) => process.send?.(message);

let received = new Map<string, number>();
let target = Infinity;
/** While holding: the requests not answered yet. */
let held: Array<() => void> | null = null;

const server = () =>
  createServer({ cert, key, keepAliveTimeout: 60_000 }, (req, res) => {
    req.resume();
    req.on('end', () => {
      const id = req.headers['webhook-id'];
      const key = `${req.url} ${typeof id === 'string' ? id : received.size}`;
      if (!received.has(key)) received.set(key, performance.timeOrigin + performance.now());
      const answer = () => res.writeHead(204).end();
      if (held === null) answer();
      else held.push(answer);
      if (received.size >= target) {
        target = Infinity;
        send({ reached: received.size });
      }
    });
  });

process.on('message', (message: { expect?: number; times?: boolean; hold?: boolean; release?: boolean }) => {
  if (message.hold) {
    held ??= [];
  } else if (message.release) {
    const waiting = held ?? [];
    held = null;
    for (const answer of waiting) answer();
  } else if (message.expect !== undefined) {
    received = new Map();
    target = message.expect;
  } else if (message.times) {
    send({ times: [...received] });
  }
});
process.on('disconnect', () => process.exit(0));

void Promise.all(
  Array.from(
    { length: ports },
    () =>
      new Promise<number>((resolve) => {
        const s = server();
        s.listen(0, '127.0.0.1', () => resolve((s.address() as { port: number }).port));
      }),
  ),
).then((listening) => send({ ports: listening }));
