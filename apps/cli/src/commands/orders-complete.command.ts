import { parseArgs } from 'node:util';
import { CompleteOrderCommand } from '@filing/orders';
import { isUuid } from '@filing/platform';
import { type CliCommand, executeCommand, operatorContext, printJson, UsageError } from '../cli-command';

/**
 * `orders:complete ID` (CONTRACT.md §6): the operator marks a submitted order completed, as
 * `POST /internal-api/v1/orders/{id}/complete` does. Prints the order (with its account) as one
 * JSON object; an unknown order or one that is not `submitted` exits 1 with the reason.
 */
export const ordersCompleteCommand: CliCommand = {
  name: 'orders:complete',
  usage: 'orders:complete ORDER_ID',
  summary: 'Mark a submitted order completed (OrderCompleted); prints the order',
  async run(app, args, out) {
    const { positionals } = parseArgs({ args, options: {}, allowPositionals: true, strict: true });
    if (positionals.length !== 1) throw new UsageError(`Expected one order id (${this.usage})`);
    // Checks `id`, not `given`: a false isUuid(given) would narrow `given` to never for the message.
    const [given] = positionals;
    const id = given.toLowerCase();
    if (!isUuid(id)) throw new UsageError(`Not an order id (a UUID): ${given}`);
    const { resource: order } = await executeCommand(app, new CompleteOrderCommand(operatorContext(), id));
    printJson(out, {
      id: order.id,
      account_id: order.account_id,
      entity_id: order.entity_id,
      order_type: order.order_type,
      jurisdiction_code: order.jurisdiction_code,
      details: order.details,
      status: order.status,
      cancellation_reason: order.cancellation_reason,
      created_at: order.created_at,
      updated_at: order.updated_at,
      version: order.version,
    });
  },
};
