import type { Position } from '@filing/event-store';
import { Logger } from '@nestjs/common';
import type { ProjectionRunner } from '../projections/projection-runner';
import { HeadBarrier, ReadYourWrites } from './read-your-writes';

describe('ReadYourWrites', () => {
  const position: Position = { commit: 9n, prepare: 9n };
  let warn: jest.SpyInstance;
  beforeEach(() => {
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });
  afterEach(() => jest.restoreAllMocks());

  const withRunner = (reached: boolean) => {
    const waitFor = jest.fn(async () => reached);
    return { waitFor, rw: new ReadYourWrites({ waitFor } as unknown as ProjectionRunner) };
  };

  it('waits for the position with the default 5 s bound', async () => {
    const { waitFor, rw } = withRunner(true);
    await rw.await(position);
    expect(waitFor).toHaveBeenCalledWith(position, 5000);
    expect(warn).not.toHaveBeenCalled();
  });

  it('does not wait when nothing was written', async () => {
    const { waitFor, rw } = withRunner(true);
    await rw.await(null);
    expect(waitFor).not.toHaveBeenCalled();
  });

  it('proceeds with a warning when the projections are late', async () => {
    const { waitFor, rw } = withRunner(false);
    await expect(rw.await(position, 50)).resolves.toBeUndefined();
    expect(waitFor).toHaveBeenCalledWith(position, 50);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('9/9'));
  });
});

describe('HeadBarrier', () => {
  const at = (n: number): Position => ({ commit: BigInt(n), prepare: BigInt(n) });

  /** Head reads the test answers one by one; each read remembers what it was answered. */
  function harness(reached = async (_: Position, __: number) => true) {
    const reads: Array<{ answer: (p: Position | null) => void; fail: (e: Error) => void }> = [];
    const waited: Position[] = [];
    const barrier = new HeadBarrier(
      () =>
        new Promise<Position | null>((answer, fail) => {
          reads.push({ answer, fail });
        }),
      async (position, timeoutMs) => {
        waited.push(position);
        return reached(position, timeoutMs);
      },
    );
    return { barrier, reads, waited };
  }
  const tick = () => new Promise((r) => setImmediate(r));

  it('many concurrent callers cost two head reads: the one that starts first, and one shared by all who came during it', async () => {
    const { barrier, reads, waited } = harness();
    const passing = Array.from({ length: 50 }, () => barrier.pass(1000));
    await tick();
    expect(reads).toHaveLength(1);
    reads[0].answer(at(7));
    await tick();
    expect(reads).toHaveLength(2);
    reads[1].answer(at(8));
    expect(await Promise.all(passing)).toEqual(Array(50).fill(true));
    expect(waited).toEqual([at(7), ...Array(49).fill(at(8))]);
  });

  it('a caller arriving while a read is in flight joins the next read, which starts after it; all such callers share it', async () => {
    const { barrier, reads, waited } = harness();
    const first = barrier.pass(1000);
    await tick();
    // These arrive after the first read started: its answer may predate writes they have seen.
    const later = [barrier.pass(1000), barrier.pass(1000)];
    await tick();
    expect(reads).toHaveLength(1);
    reads[0].answer(at(5));
    expect(await first).toBe(true);
    await tick();
    expect(reads).toHaveLength(2);
    reads[1].answer(at(9));
    expect(await Promise.all(later)).toEqual([true, true]);
    expect(waited).toEqual([at(5), at(9), at(9)]);
    // Nothing in flight any more: the next caller starts a read of its own.
    const next = barrier.pass(1000);
    await tick();
    expect(reads).toHaveLength(3);
    reads[2].answer(null); // an empty store: nothing to wait for
    expect(await next).toBe(true);
    expect(waited).toHaveLength(3);
  });

  it('gives up when the read models do not get there in time (the head it read), the head cannot be read or the read hangs (false)', async () => {
    const late = harness(async () => false);
    const passing = late.barrier.pass(1000);
    await tick();
    late.reads[0].answer(at(3));
    expect(await passing).toEqual(at(3));

    const failing = harness();
    const failed = failing.barrier.pass(1000);
    await tick();
    failing.reads[0].fail(new Error('store down'));
    expect(await failed).toBe(false);

    const hanging = harness();
    expect(await hanging.barrier.pass(20)).toBe(false);
    expect(hanging.waited).toEqual([]);
  });

  it('hands the waiting what is left of the timeout', async () => {
    const budgets: number[] = [];
    const { barrier, reads } = harness(async (_, timeoutMs) => {
      budgets.push(timeoutMs);
      return true;
    });
    const passing = barrier.pass(1000);
    await new Promise((r) => setTimeout(r, 30));
    reads[0].answer(at(1));
    await passing;
    expect(budgets[0]).toBeLessThanOrEqual(1000 - 25);
    expect(budgets[0]).toBeGreaterThan(0);
  });
});
