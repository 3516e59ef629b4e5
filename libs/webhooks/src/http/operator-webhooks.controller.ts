import { accountStream } from '@filing/auth';
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { type CommandContext, createValidationPipe, Ctx, NotFoundError, ResourceIdPipe } from '@filing/platform';
import { Body, Controller, Get, Inject, Param, Put, UsePipes } from '@nestjs/common';
import { SettingsService } from '../settings/settings.service';
import { SettingsDto } from './webhooks.dto';

/** The operator's side of the account switch: `GET` and `PUT /internal-api/v1/accounts/{id}/webhook-settings`. */
@Controller('internal-api/v1')
@UsePipes(createValidationPipe())
export class OperatorWebhooksController {
  constructor(
    private readonly settings: SettingsService,
    @Inject(EVENT_STORE) private readonly store: EventStore,
  ) {}

  @Get('accounts/:id/webhook-settings')
  async get(@Param('id', ResourceIdPipe) id: string) {
    await this.assertAccount(id);
    return this.settings.get(id);
  }

  @Put('accounts/:id/webhook-settings')
  async put(@Ctx() ctx: CommandContext, @Param('id', ResourceIdPipe) id: string, @Body() body: SettingsDto) {
    await this.assertAccount(id);
    return this.settings.set(ctx, id, body.notifications_enabled);
  }

  /** Only the account's stream name, from auth's event contract: no reach into its read model. */
  private async assertAccount(id: string): Promise<void> {
    const [first] = await this.store.readStream(accountStream(id), { maxCount: 1 });
    if (!first) throw NotFoundError.of('account', id);
  }
}
