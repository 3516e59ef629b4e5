import { type CommandContext, Ctx, ValidationError } from '@filing/platform';
import { Body, Controller, Param, Post, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { parseInstant } from '../endpoint-health/endpoint-health';
import { RecoveryService } from '../endpoint-health/recovery.service';
import { EndpointsService } from '../endpoints/endpoints.service';
import { type CurrentSession, Session, SettingsSessionGuard } from './session/session.guard';
import { setFlash } from './session/flash';
import { SettingsErrorFilter } from './settings-errors.filter';
import { redirect } from './settings-http';
import { endpointUrl } from './views/profile.page';
import { checkId } from './webhook-settings.controller';

/** An endpoint page's "Recover failed deliveries" form: the API's recover, for the signed-in user's account. */
@Controller('settings/profile')
@UseFilters(SettingsErrorFilter)
@UseGuards(SettingsSessionGuard)
export class EndpointRecoveryController {
  constructor(
    private readonly endpoints: EndpointsService,
    private readonly recovery: RecoveryService,
  ) {}

  @Post('webhook-endpoints/:id/recover')
  async recover(
    @Ctx() ctx: CommandContext,
    @Session() current: CurrentSession,
    @Param('id') id: string,
    @Body() body: Record<string, unknown>,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const endpoint = this.endpoints.get(ctx, checkId(id));
    const since = formInstant(body.since);
    if (!since)
      throw ValidationError.field('since', 'Enter the date and time (UTC) to recover failed deliveries from.');
    const { deliveries } = await this.recovery.recover(ctx, endpoint.id, since);
    setFlash(
      reply,
      current.token,
      deliveries === 0
        ? 'No failed deliveries to recover since then.'
        : `${deliveries} failed ${deliveries === 1 ? 'delivery' : 'deliveries'} will be sent again.`,
    );
    redirect(reply, `${endpointUrl(endpoint.id)}#deliveries`);
  }
}

/** A `datetime-local` value is the UTC time the form says it is; a value with its own offset is taken as is. */
function formInstant(value: unknown): Date | null {
  if (typeof value !== 'string') return null;
  const text = value.trim();
  const zoned = /(Z|[+-]\d{2}:\d{2})$/.test(text) ? text : `${/T\d{2}:\d{2}$/.test(text) ? `${text}:00` : text}Z`;
  return parseInstant(zoned);
}
