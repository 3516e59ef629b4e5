import type { Position } from '@filing/event-store';
import { Injectable, Logger } from '@nestjs/common';
import { ProjectionRunner } from '../projections/projection-runner';

/**
 * Read-your-writes over asynchronous projections: a write handler awaits the position its
 * command returned before answering, so the client's next read sees its write.
 */
@Injectable()
export class ReadYourWrites {
  private readonly logger = new Logger(ReadYourWrites.name);

  constructor(private readonly runner: ProjectionRunner) {}

  /**
   * Resolves once every projection has reached `position` (at once for null: nothing written).
   * At the timeout it proceeds rather than fail the request: the write is already durable in
   * the event store, only its visibility in read models is delayed, and an error would invite
   * the client to retry a write that succeeded.
   */
  async await(position: Position | null, timeoutMs = 5000): Promise<void> {
    if (position === null) return;
    const reached = await this.runner.waitFor(position, timeoutMs);
    if (!reached) {
      this.logger.warn(
        `Read models did not reach ${position.commit}/${position.prepare} within ${timeoutMs} ms; answering anyway`,
      );
    }
  }
}
