import { createParamDecorator, type ExecutionContext, ForbiddenException, UnauthorizedException } from '@nestjs/common';
import { getPrincipal } from './principal';

/**
 * `@AccountId() accountId: string`: the account every query of an account-scoped route runs in.
 * A principal without one (an operator) cannot act on customer resources.
 */
export const AccountId = createParamDecorator((_: unknown, ctx: ExecutionContext): string => {
  const principal = getPrincipal(ctx.switchToHttp().getRequest());
  if (!principal) throw new UnauthorizedException();
  if (!principal.accountId) throw new ForbiddenException('This route needs a token of a customer account');
  return principal.accountId;
});
