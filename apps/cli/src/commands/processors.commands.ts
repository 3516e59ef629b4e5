import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import {
  appendProcessorRecord,
  field,
  isUuid,
  parkedEvents,
  ProcessorRecords,
  processorStream,
  ProjectionRunner,
  recordId,
} from '@filing/platform';
import type { INestApplicationContext } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { type CliCommand, CommandFailedError, printJson, UsageError } from '../cli-command';

/** The reactor whose poison events are parked (projections halt instead). */
const FANOUT = 'webhook-fanout';
const ACTOR = 'operator:cli';
const POLL_MS = 250;

const store = (app: INestApplicationContext) => app.get<EventStore>(EVENT_STORE);

/** `processors:parked [--processor NAME]`: one JSON line per event parked now. */
export const processorsParkedCommand: CliCommand = {
  name: 'processors:parked',
  usage: 'processors:parked [--processor webhook-fanout]',
  summary: 'List the events a reactor (the webhook fan-out) parked and no retry has handled yet',
  async run(app, args, out) {
    const { values } = parseArgs({ args, options: { processor: { type: 'string' } }, strict: true });
    const processor = values.processor ?? FANOUT;
    const records = await store(app).readStream(processorStream(processor));
    for (const parked of parkedEvents(records).values()) printJson(out, parked);
  },
};

/**
 * `processors:retry-parked [--event ID] [--wait 30]`: asks the running instances to handle the
 * parked events again (a request recorded in the processor's stream, handled at its position by
 * every instance alike), then prints each outcome as the instances record it.
 */
export const processorsRetryParkedCommand: CliCommand = {
  name: 'processors:retry-parked',
  usage: 'processors:retry-parked [--processor webhook-fanout] [--event EVENT_ID] [--wait SECONDS]',
  summary: 'Retry parked events once their cause is fixed; prints each outcome (handled, failed, pending)',
  async run(app, args, out) {
    const { values } = parseArgs({
      args,
      options: { processor: { type: 'string' }, event: { type: 'string' }, wait: { type: 'string' } },
      strict: true,
    });
    const processor = values.processor ?? FANOUT;
    const waitSeconds = values.wait === undefined ? 30 : Number(values.wait);
    if (!Number.isInteger(waitSeconds) || waitSeconds < 0) throw new UsageError('--wait must be whole seconds');
    const events = store(app);
    const parked = [...parkedEvents(await events.readStream(processorStream(processor))).values()].filter(
      (p) => values.event === undefined || p.event_id === values.event,
    );
    if (values.event !== undefined && parked.length === 0) {
      throw new CommandFailedError(`Event ${values.event} is not parked by ${processor}`);
    }
    const requests = new Map<string, string>();
    for (const p of parked) {
      const id = randomUUID();
      const data = {
        processor,
        event_id: p.event_id,
        event_type: p.event_type,
        stream: p.stream,
        position: p.position,
      };
      await appendProcessorRecord(
        events,
        processor,
        { id, type: ProcessorRecords.ParkedEventRetryRequested, data },
        ACTOR,
      );
      requests.set(id, p.event_id);
    }
    const outcomes = await awaitOutcomes(events, processor, requests, waitSeconds * 1000);
    for (const [requestId, eventId] of requests) {
      const { outcome, error } = outcomes.get(requestId) ?? { outcome: 'pending', error: null };
      printJson(out, { event_id: eventId, request_id: requestId, outcome, error });
    }
    const unhandled = [...requests.keys()].filter((id) => outcomes.get(id)?.outcome !== 'handled');
    if (unhandled.length > 0) {
      throw new CommandFailedError(
        `${unhandled.length} of ${requests.size} retries not handled (failed, or no running instance answered within ${waitSeconds} s)`,
      );
    }
  },
};

async function awaitOutcomes(
  events: EventStore,
  processor: string,
  requests: ReadonlyMap<string, string>,
  waitMs: number,
): Promise<Map<string, { outcome: string; error: string | null }>> {
  const deadline = Date.now() + waitMs;
  const outcomes = new Map<string, { outcome: string; error: string | null }>();
  for (;;) {
    for (const r of await events.readStream(processorStream(processor))) {
      if (r.type !== ProcessorRecords.ParkedEventRetried || !requests.has(field(r, 'request_id'))) continue;
      outcomes.set(field(r, 'request_id'), { outcome: field(r, 'outcome'), error: field(r, 'error') || null });
    }
    if (outcomes.size === requests.size || Date.now() >= deadline) return outcomes;
    await delay(POLL_MS);
  }
}

/**
 * `processors:skip projection:NAME EVENT_ID`: an operator's decision, recorded, that a halted
 * projection goes on without that event; every instance reads the record and resumes.
 */
export const processorsSkipCommand: CliCommand = {
  name: 'processors:skip',
  usage: 'processors:skip projection:NAME EVENT_ID',
  summary: 'Skip one event for a halted projection (recorded; every instance resumes past it)',
  async run(app, args, out) {
    const { positionals } = parseArgs({ args, options: {}, allowPositionals: true, strict: true });
    if (positionals.length !== 2) throw new UsageError(`Expected a processor and an event id (${this.usage})`);
    const [processor, eventId] = positionals;
    const names = app.get(ProjectionRunner).registered.map((p) => `projection:${p.name}`);
    if (!names.includes(processor)) {
      throw new UsageError(
        `Not a projection: ${processor} (one of ${names.join(', ')}; parked fan-out events are retried)`,
      );
    }
    if (!isUuid(eventId.toLowerCase())) throw new UsageError(`Not an event id (a UUID): ${positionals[1]}`);
    const id = recordId(processor, ProcessorRecords.EventSkipped, eventId);
    await appendProcessorRecord(
      store(app),
      processor,
      { id, type: ProcessorRecords.EventSkipped, data: { processor, event_id: eventId } },
      ACTOR,
    );
    printJson(out, { processor, event_id: eventId, skipped: true });
  },
};

/**
 * `processors:status --url URL`: what one running instance says of its processors (halted ones
 * live in that process's memory, not in the store): its readiness and `degraded` list, as JSON.
 */
export const processorsStatusCommand: CliCommand = {
  name: 'processors:status',
  usage: 'processors:status --url http://instance:3000',
  summary: "Show an instance's readiness and its halted processors and parked events (from its /readyz)",
  async run(_app, args, out) {
    const { values } = parseArgs({ args, options: { url: { type: 'string' } }, strict: true });
    if (!values.url) throw new UsageError(`--url is required (${this.usage})`);
    let url: URL;
    try {
      url = new URL('/readyz', values.url);
    } catch {
      throw new UsageError(`Not a URL: ${values.url}`);
    }
    let res: Response;
    try {
      res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    } catch (err) {
      throw new CommandFailedError(`${url.origin} did not answer: ${(err as Error).message}`);
    }
    const body = (await res.json()) as { degraded?: unknown[]; error?: Record<string, unknown> };
    printJson(out, {
      url: url.origin,
      ready: res.status === 200,
      ...(body.error && { failing: Object.keys(body.error) }),
      degraded: body.degraded ?? [],
    });
  },
};

export const processorsCommands: readonly CliCommand[] = [
  processorsStatusCommand,
  processorsParkedCommand,
  processorsRetryParkedCommand,
  processorsSkipCommand,
];
