/**
 * The sender thread's entry (started by sender-thread.ts): signs and sends each request it is
 * given with a WebhookSender of its own (its own undici pools and TLS context, the system
 * resolver as the address guard's DNS), at most `requestsPerEndpoint` at a time per endpoint (the
 * others wait in its lane, SendLanes), and answers once per turn of its event loop with every
 * result that came in meanwhile.
 */
import { writeFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { systemResolver } from '../address/dns-resolver';
import { endpointDisabledBy, endpointPausedFor } from '../deliveries/outcome';
import { QUEUED_REQUEST_MAX_WAIT_MS } from './dispatcher-instance';
import { SendLanes } from './send-lanes';
import type { SenderAnswer, SenderCall, SenderThreadSettings } from './sender-thread';
import { type SendResult, WebhookSender } from './webhook-sender';

// Its name in `top -H`, `ps -L` and perf (Linux; elsewhere unnamed): docs/operations.md, "Threads".
try {
  writeFileSync('/proc/thread-self/comm', 'webhook-sender');
} catch {
  // Not Linux: the thread keeps the process's name.
}
const port = parentPort!;
const settings = workerData as SenderThreadSettings;
// As extend in @filing/platform, which this thread does not load.
const sender = new WebhookSender(Object.assign({}, settings, { resolver: systemResolver }));
const running = new Set<Promise<void>>();
let answers: SenderAnswer[] = [];

const flush = (): void => {
  if (answers.length === 0) return;
  port.postMessage(answers);
  answers = [];
};
const answer = (a: SenderAnswer): void => {
  if (answers.length === 0) setImmediate(flush);
  answers.push(a);
};

// WebhookSender answers every failure as a result; anything it throws is a bug, still a failed attempt.
const failed: SendResult = { result: { kind: 'error', error: 'other' }, durationMs: 0, retryAfterMs: null };

const lanes = new SendLanes<SenderCall>(settings.requestsPerEndpoint, QUEUED_REQUEST_MAX_WAIT_MS, start, (call) =>
  answer({ id: call.id, notSent: true }),
);

/**
 * Sends now: the signature's timestamp and the attempt's time are when the request leaves.
 * Unless its claim's time ran out while it waited in its lane (`sendBy`): then it never leaves.
 */
function start(call: SenderCall): void {
  const sentAt = Date.now();
  if (call.sendBy !== undefined && sentAt > call.sendBy) {
    answer({ id: call.id, notSent: true });
    // Its place in the lane is free again: the next one's turn (not from inside the lane's own loop).
    const lane = call.endpointId;
    if (lane !== undefined) queueMicrotask(() => lanes.answered(lane, false, Date.now()));
    return;
  }
  const done = sender
    // As extend in @filing/platform (this thread does not load the platform): not `{ ...call, timestamp }`.
    .send(Object.assign({}, call, { timestamp: Math.floor(sentAt / 1000) }))
    .catch(() => failed)
    .then((sent) => {
      answer({ id: call.id, ...sent, sentAt });
      running.delete(done);
      // The endpoint asked to wait or is gone: what waits behind this request is not sent.
      const stop =
        endpointPausedFor(sent.result, sent.retryAfterMs) !== null || endpointDisabledBy(sent.result) !== null;
      if (call.endpointId !== undefined) lanes.answered(call.endpointId, stop, Date.now());
    });
  running.add(done);
}

port.on('message', (message: readonly SenderCall[] | 'close') => {
  if (message !== 'close') {
    const now = Date.now();
    for (const call of message) {
      if (call.endpointId === undefined) start(call);
      else lanes.add(call.endpointId, call, now);
    }
    return;
  }
  // What still waits (the dispatcher has stopped and waited for its attempts: normally nothing)
  // is answered as not sent; every request sending ends (each within the timeout) and is
  // answered before the thread exits.
  lanes.stop();
  void Promise.all(running)
    .then(() => sender.close())
    .finally(() => {
      flush();
      port.close();
    });
});
