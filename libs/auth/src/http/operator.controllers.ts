import {
  type CommandContext,
  createValidationPipe,
  Ctx,
  CursorCodec,
  NotFoundError,
  PageQueryDto,
  pageRequest,
  ReadYourWrites,
  ResourceIdPipe,
  SkipIdempotency,
  ValidationError,
  extend,
} from '@filing/platform';
import { Body, Controller, Get, HttpCode, Param, Post, Query, Res, UsePipes } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import type { FastifyReply } from 'fastify';
import { CreateAccountCommand } from '../commands/create-account';
import { CreateClientCommand } from '../commands/create-client';
import { CreateUserCommand } from '../commands/create-user';
import { RevokeClientCommand } from '../commands/revoke-client';
import { ExpirePreviousSecretCommand, RotateClientSecretCommand } from '../commands/rotate-client-secret';
import { AuthQueries } from '../read-model/auth.queries';
import { accountView, clientView, userView } from '../read-model/views';
import { CreateAccountDto, CreateClientDto, CreateUserDto, RotateClientSecretDto } from './operator.dto';

const BASE = '/internal-api/v1';

/**
 * The operator API (CONTRACT.md §3, "Operator API"): accounts, clients, users. The global
 * ApiAccessGuard lets only `operator` tokens in. Writes answer after the read models have
 * caught up with them, and answer from the read models.
 */
abstract class OperatorController {
  constructor(
    protected readonly commandBus: CommandBus,
    protected readonly queries: AuthQueries,
    protected readonly readYourWrites: ReadYourWrites,
  ) {}

  protected found<T>(row: T | undefined, resource: string, id: string): T {
    if (!row) throw NotFoundError.of(resource, id);
    return row;
  }
}

@Controller('internal-api/v1/accounts')
@UsePipes(createValidationPipe())
export class AccountsController extends OperatorController {
  constructor(
    commandBus: CommandBus,
    queries: AuthQueries,
    readYourWrites: ReadYourWrites,
    private readonly cursors: CursorCodec,
  ) {
    super(commandBus, queries, readYourWrites);
  }

  @Post()
  async create(
    @Body() body: CreateAccountDto,
    @Ctx() ctx: CommandContext,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const { accountId, position } = await this.commandBus.execute(new CreateAccountCommand(body.name, ctx));
    await this.readYourWrites.await(position);
    const account = this.found(this.queries.account(accountId), 'account', accountId);
    reply.header('location', `${BASE}/accounts/${accountId}`).header('etag', `"${account.version}"`);
    return accountView(account);
  }

  @Get()
  list(@Query() query: PageQueryDto) {
    return this.queries.accounts(pageRequest<string>(query, 'accounts', 'string', this.cursors), accountView);
  }

  @Get(':id')
  get(@Param('id', ResourceIdPipe) id: string, @Res({ passthrough: true }) reply: FastifyReply) {
    const account = this.found(this.queries.account(id), 'account', id);
    reply.header('etag', `"${account.version}"`);
    return accountView(account);
  }
}

@Controller('internal-api/v1/clients')
@UsePipes(createValidationPipe())
export class ClientsController extends OperatorController {
  constructor(commandBus: CommandBus, queries: AuthQueries, readYourWrites: ReadYourWrites) {
    super(commandBus, queries, readYourWrites);
  }

  /** The secret is in this answer only; the service keeps its scrypt hash (so no Idempotency-Key replay). */
  @Post()
  @SkipIdempotency()
  async create(
    @Body() body: CreateClientDto,
    @Ctx() ctx: CommandContext,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const operator = body.operator === true || (body.account_id === undefined && body.scope === 'operator');
    if (operator && body.account_id !== undefined) {
      throw ValidationError.field('account_id', 'an operator client belongs to no account');
    }
    if (!operator && body.account_id === undefined) {
      throw ValidationError.field('account_id', 'account_id is required (or operator: true for an operator client)');
    }
    const result = await this.commandBus.execute(
      new CreateClientCommand(
        { accountId: body.account_id ?? null, kind: operator ? 'operator' : 'customer', scope: body.scope },
        ctx,
      ),
    );
    await this.readYourWrites.await(result.position);
    const client = this.found(this.queries.clientWithUsage(result.clientId), 'client', result.clientId);
    reply.header('location', `${BASE}/clients/${result.clientId}`).header('etag', `"${client.version}"`);
    reply.header('cache-control', 'no-store');
    return extend(clientView(client), { client_secret: result.clientSecret });
  }

  @Get(':id')
  get(@Param('id', ResourceIdPipe) id: string, @Res({ passthrough: true }) reply: FastifyReply) {
    const client = this.found(this.queries.clientWithUsage(id), 'client', id);
    reply.header('etag', `"${client.version}"`);
    return clientView(client);
  }

  /**
   * A new secret, shown once. The old secret and every token issued with it stop working at once,
   * or after `previous_secret_expires_in` seconds (the body is optional).
   */
  @Post(':id/rotate-secret')
  @HttpCode(200)
  @SkipIdempotency()
  async rotate(
    @Param('id', ResourceIdPipe) id: string,
    @Body() body: RotateClientSecretDto,
    @Ctx() ctx: CommandContext,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const options = { previousSecretExpiresIn: body?.previous_secret_expires_in };
    const result = await this.commandBus.execute(new RotateClientSecretCommand(id, ctx, options));
    await this.readYourWrites.await(result.position);
    const client = this.found(this.queries.clientWithUsage(result.clientId), 'client', id);
    reply.header('cache-control', 'no-store');
    return extend(clientView(client), { client_secret: result.clientSecret });
  }

  /** Ends a rotation's overlap now: the previous secret and its tokens stop working. With none live, a no-op. */
  @Post(':id/expire-previous-secret')
  @HttpCode(200)
  async expirePrevious(@Param('id', ResourceIdPipe) id: string, @Ctx() ctx: CommandContext) {
    const result = await this.commandBus.execute(new ExpirePreviousSecretCommand(id, ctx));
    await this.readYourWrites.await(result.position);
    return clientView(this.found(this.queries.clientWithUsage(result.clientId), 'client', id));
  }

  /** The client and every token it holds stop working at once. Revoking twice is a no-op. */
  @Post(':id/revoke')
  @HttpCode(200)
  async revoke(@Param('id', ResourceIdPipe) id: string, @Ctx() ctx: CommandContext) {
    const result = await this.commandBus.execute(new RevokeClientCommand(id, ctx));
    await this.readYourWrites.await(result.position);
    return clientView(this.found(this.queries.clientWithUsage(result.clientId), 'client', id));
  }
}

@Controller('internal-api/v1/users')
@UsePipes(createValidationPipe())
export class UsersController extends OperatorController {
  constructor(commandBus: CommandBus, queries: AuthQueries, readYourWrites: ReadYourWrites) {
    super(commandBus, queries, readYourWrites);
  }

  @Post()
  async create(
    @Body() body: CreateUserDto,
    @Ctx() ctx: CommandContext,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const result = await this.commandBus.execute(
      new CreateUserCommand({ accountId: body.account_id, email: body.email, password: body.password }, ctx),
    );
    await this.readYourWrites.await(result.position);
    const user = this.found(this.queries.user(result.userId), 'user', result.userId);
    reply.header('location', `${BASE}/users/${result.userId}`).header('etag', `"${user.version}"`);
    return userView(user);
  }

  @Get(':id')
  get(@Param('id', ResourceIdPipe) id: string, @Res({ passthrough: true }) reply: FastifyReply) {
    const user = this.found(this.queries.user(id), 'user', id);
    reply.header('etag', `"${user.version}"`);
    return userView(user);
  }
}
