import type { RecordedEnvelope } from '@filing/platform';
import { NOTIFICATIONS_SWITCHED, type NotificationsSwitched } from '../endpoints/endpoint.events';

/** The account switch; off until an account turns it on. */
export interface SettingsState {
  readonly notificationsEnabled: boolean;
}

export const initialSettings: SettingsState = { notificationsEnabled: false };

export function evolveSettings(state: SettingsState, event: RecordedEnvelope<NotificationsSwitched>): SettingsState {
  return event.type === NOTIFICATIONS_SWITCHED ? { notificationsEnabled: event.data.enabled } : state;
}

export interface SwitchNotifications {
  readonly accountId: string;
  readonly enabled: boolean;
}

/** Setting the switch to where it already is records nothing. */
export function decideSettings(state: SettingsState, command: SwitchNotifications): NotificationsSwitched[] {
  if (state.notificationsEnabled === command.enabled) return [];
  return [{ type: NOTIFICATIONS_SWITCHED, data: { account_id: command.accountId, enabled: command.enabled } }];
}
