/**
 * Probe routes for testing the global bearer guard and benchmarking it, independent of any
 * resource family: every method under `/external-api/v1/_probe` and `/internal-api/v1/_probe`,
 * answering with the request's principal and command context; `/_probe` is public.
 */
import { type CommandContext, CurrentPrincipal, Ctx, type Principal } from '@filing/platform';
import { Controller, Delete, Get, HttpCode, Module, Patch, Post, Put } from '@nestjs/common';

@Controller()
class ProbeController {
  @Get('_probe')
  open() {
    return { ok: true };
  }

  /** The same handler as `/_probe`, behind the guard (the auth benchmark compares the two). */
  @Get('external-api/v1/_probe/plain')
  guarded() {
    return { ok: true };
  }

  @Get('external-api/v1/_probe')
  read(@CurrentPrincipal() principal: Principal, @Ctx() context: CommandContext) {
    return { principal, context };
  }

  @Post('external-api/v1/_probe')
  @HttpCode(200)
  post(@CurrentPrincipal() principal: Principal, @Ctx() context: CommandContext) {
    return { principal, context };
  }

  @Put('external-api/v1/_probe')
  put(@CurrentPrincipal() principal: Principal) {
    return { principal };
  }

  @Patch('external-api/v1/_probe')
  patch(@CurrentPrincipal() principal: Principal) {
    return { principal };
  }

  @Delete('external-api/v1/_probe')
  remove(@CurrentPrincipal() principal: Principal) {
    return { principal };
  }

  @Get('internal-api/v1/_probe')
  operatorRead(@CurrentPrincipal() principal: Principal) {
    return { principal };
  }

  @Post('internal-api/v1/_probe')
  @HttpCode(200)
  operatorWrite(@CurrentPrincipal() principal: Principal) {
    return { principal };
  }
}

@Module({ controllers: [ProbeController] })
export class ProbeModule {}
