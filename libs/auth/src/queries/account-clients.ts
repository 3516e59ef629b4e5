import { Injectable } from '@nestjs/common';
import { type IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import { AuthQueries } from '../read-model/auth.queries';
import { clientView } from '../read-model/views';

/** A client as the operator API shows it (no secret, no hash). */
export type ClientView = ReturnType<typeof clientView>;

/**
 * An account's API clients, oldest first, with when each secret last got a token: what the
 * settings screen's *API clients* lists. `clientId` narrows it to that one client, or none when
 * the client is not the account's (the caller answers 404 either way).
 */
export class AccountClientsQuery extends Query<ClientView[]> {
  constructor(
    readonly accountId: string,
    readonly clientId?: string,
  ) {
    super();
  }
}

@Injectable()
@QueryHandler(AccountClientsQuery)
export class AccountClientsHandler implements IQueryHandler<AccountClientsQuery, ClientView[]> {
  constructor(private readonly queries: AuthQueries) {}

  execute({ accountId, clientId }: AccountClientsQuery): Promise<ClientView[]> {
    const now = Date.now();
    if (clientId !== undefined) {
      const row = this.queries.clientWithUsage(clientId);
      return Promise.resolve(row && row.account_id === accountId ? [clientView(row, now)] : []);
    }
    return Promise.resolve(this.queries.accountClients(accountId).map((row) => clientView(row, now)));
  }
}
