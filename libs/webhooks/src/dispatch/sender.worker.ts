/**
 * The sender thread's entry (started by sender-thread.ts): signs and sends each request it is
 * given with a WebhookSender of its own (its own undici pools and TLS context, the system
 * resolver as the address guard's DNS), and answers once per turn of its event loop with every
 * result that came in meanwhile.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { systemResolver } from '../address/dns-resolver';
import type { SenderAnswer, SenderCall } from './sender-thread';
import { type SenderSettings, type SendResult, WebhookSender } from './webhook-sender';

const port = parentPort!;
const sender = new WebhookSender({ ...(workerData as SenderSettings), resolver: systemResolver });
const running = new Set<Promise<void>>();
let answers: SenderAnswer[] = [];

const flush = (): void => {
  if (answers.length === 0) return;
  port.postMessage(answers);
  answers = [];
};

// WebhookSender answers every failure as a result; anything it throws is a bug, still a failed attempt.
const failed: SendResult = { result: { kind: 'error', error: 'other' }, durationMs: 0, retryAfterMs: null };

function start(call: SenderCall): void {
  const done = sender
    .send(call)
    .catch(() => failed)
    .then((sent) => {
      if (answers.length === 0) setImmediate(flush);
      answers.push({ id: call.id, ...sent });
      running.delete(done);
    });
  running.add(done);
}

port.on('message', (message: readonly SenderCall[] | 'close') => {
  if (message !== 'close') {
    for (const call of message) start(call);
    return;
  }
  // Every request in flight ends (each within the timeout) and is answered before the thread exits.
  void Promise.all(running)
    .then(() => sender.close())
    .finally(() => {
      flush();
      port.close();
    });
});
