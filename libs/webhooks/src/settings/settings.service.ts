import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { type CommandContext, handleCommand, ReadYourWrites, streamName, extend } from '@filing/platform';
import { Inject, Injectable } from '@nestjs/common';
import { SETTINGS_STREAM, type NotificationsSwitched } from '../endpoints/endpoint.events';
import { EndpointsQueries } from '../read-model/endpoints.queries';
import { decideSettings, evolveSettings, initialSettings, type SwitchNotifications } from './webhook-settings';

export interface SettingsView {
  readonly notifications_enabled: boolean;
}

@Injectable()
export class SettingsService {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly queries: EndpointsQueries,
    private readonly ryw: ReadYourWrites,
  ) {}

  get(accountId: string): SettingsView {
    return { notifications_enabled: this.queries.notificationsEnabled(accountId) };
  }

  /** `ctx` is the customer's or, for the operator API, the operator's (its account_id is then this account). */
  async set(ctx: CommandContext, accountId: string, enabled: boolean): Promise<SettingsView> {
    const result = await handleCommand<typeof initialSettings, NotificationsSwitched, SwitchNotifications>({
      store: this.store,
      streamId: streamName(SETTINGS_STREAM, accountId),
      initialState: initialSettings,
      evolve: evolveSettings,
      decide: decideSettings,
      command: { accountId, enabled },
      context: extend(ctx, { account_id: accountId }),
    });
    await this.ryw.await(result.position);
    return { notifications_enabled: result.state.notificationsEnabled };
  }
}
