import type { Position } from '@filing/event-store';
import { Logger } from '@nestjs/common';
import type { ProjectionRunner } from '../projections/projection-runner';
import { ReadYourWrites } from './read-your-writes';

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
