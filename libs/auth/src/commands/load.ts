import type { EventStore } from '@filing/event-store';
import { isUuid, loadAggregate, ValidationError } from '@filing/platform';
import { evolveAccount, initialAccountState } from '../account';
import { accountStream } from '../auth.events';

export { isUuid };

/** A reference to an account in a command's input: it must exist (else 400 naming the field). */
export async function requireAccount(store: EventStore, accountId: string, field = 'account_id'): Promise<void> {
  if (!isUuid(accountId)) throw ValidationError.field(field, `${field} must be a UUID`);
  const { state } = await loadAggregate(
    store,
    accountStream(accountId.toLowerCase()),
    initialAccountState,
    evolveAccount,
  );
  if (state.status === 'new') throw ValidationError.field(field, `No account with id ${accountId}`);
}
