import { EVENT_STORE, type EventStore, type StreamRevision } from '@filing/event-store';
import { Body, Get, Inject, Param, Patch, Post, Query, Res, type Type, UsePipes } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import type { FastifyReply } from 'fastify';
import { expectedVersion, requireAccount, type WriteCommand } from '../commands/define-aggregate';
import { NotFoundError } from '../errors/domain-errors';
import { type CommandContext, streamName } from '../events/envelope';
import { AccountId } from './account-id';
import { CursorCodec } from './cursor-codec';
import { etagOf, IfMatch, type Versioned, withETag } from './etag';
import { type HistoryItem, readHistory } from './history';
import { ApiHistoryResponse, ApiPageResponse, ApiResourceResponse } from './openapi';
import { type Page, PageQueryDto, type PageRequest, pageRequest } from './page.dto';
import { Ctx } from './principal';
import { ReadYourWrites } from './read-your-writes';
import { ResourceIdPipe } from './resource-id.pipe';
import { createValidationPipe } from './validation.pipe';

/*
 * The routes every resource family shares (CONTRACT.md §3), declared once: a family's controller
 * extends `FamilyController({...})` and adds only the routes that are its own, as the SDK's
 * `Family<T>` / `UpdatableFamily<T>` do for clients.
 */

export const EXTERNAL_API_PATH = '/external-api/v1';
/** What Fastify sends an object's JSON as: the ready-made answers go out with the same header. */
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** What the shared routes read: a family's queries (a `ResourceQueries`). */
export interface FamilyReads<V> {
  get(accountId: string, id: string): V | null;
  /** `get`'s answer as JSON text, and its version. */
  getJson(accountId: string, id: string): { readonly version: number; readonly json: string } | null;
  list(accountId: string, filters: object, page: PageRequest<string>): Page<V>;
  /** `list`'s page as JSON text, in UTF-8 (sent as it is). */
  listJson(accountId: string, filters: object, page: PageRequest<string>): Buffer;
  /** The API's view of the aggregate's state, for a write whose read-back found no row yet. */
  view(source: object): V;
}

/** A family's aggregate (`defineAggregate`). */
export interface FamilyAggregate {
  readonly streamPrefix: string;
  /**
   * Its CQRS command. The routes send `{ kind: 'create', id, input }` (with `create`) and
   * `{ kind: 'update', id, changes, expected_version }` (with `update`): the family's decide()
   * handles those kinds when it declares those routes.
   */
  command(context: CommandContext, command: never): WriteCommand<{ id: string }>;
  /** `command` for a new resource under an id it mints (`{ kind: 'create', input }`). */
  create(context: CommandContext, command: never): WriteCommand<{ id: string }>;
}

export interface FamilyRoutes<V> {
  /** The collection under /external-api/v1 (`tasks`); also names its cursors. */
  readonly path: string;
  /** Its stream prefix names the resource in a 404 and its history's stream. */
  readonly aggregate: FamilyAggregate;
  /** The resource's DTO (the OpenAPI document). */
  readonly dto: Type<unknown>;
  /** `PageQueryDto` plus the family's filters. */
  readonly listQuery: Type<PageQueryDto>;
  /** The family's queries provider, injected by the controller. */
  readonly queries: Type<FamilyReads<V>>;
  /** `POST /` with this body, as the aggregate's `create` command. A create that does more is a route of the family's own, answered by `created`. */
  readonly create?: Type<object>;
  /** `PATCH /:id` with this body, as the aggregate's `update` command (a `PatchCommand`). */
  readonly update?: Type<object>;
  /** The event after which the resource is gone: its history is a 404 too (a deleted document). */
  readonly deletedBy?: string;
}

/** The answer of every single-resource route. */
type ResourceAnswer = Versioned & { readonly id: string };

/**
 * The base of a family's controller: `GET /`, `GET /:id`, `GET /:id/history`, `POST /` and
 * `PATCH /:id` when declared, and the write helpers its own routes answer with (`created`,
 * `written`). Thin: validate (DTOs, pipes), send a command or a query, answer; every query is
 * scoped by the token's account, and another account's resource is a 404 like a missing one.
 * The subclass carries `@Controller(path)`.
 */
export function FamilyController<V extends ResourceAnswer>(family: FamilyRoutes<V>) {
  const Reads = readRoutes(family);
  const Updatable = family.update ? withPatch(Reads, family, family.update) : Reads;
  return family.create ? withPost(Updatable, family, family.create) : Updatable;
}

/** `GET /`, `GET /:id` and `GET /:id/history`, over the write helpers of `familyBase`. */
function readRoutes<V extends ResourceAnswer>(family: FamilyRoutes<V>) {
  const resource = family.aggregate.streamPrefix;

  @UsePipes(createValidationPipe())
  abstract class FamilyControllerBase extends familyBase(family) {
    // The list and GET answer the read model's stored JSON (ResourceQueries.listJson, getJson):
    // the same bytes as serialising the resources, without building them.
    @Get()
    @ApiPageResponse(family.dto)
    list(
      @Query() query: PageQueryDto,
      @AccountId() accountId: string,
      @Res({ passthrough: true }) reply: FastifyReply,
    ): Buffer {
      const page = pageRequest<string>(query, family.path, 'string', this.cursors);
      reply.type(JSON_CONTENT_TYPE);
      return this.queries.listJson(accountId, query, page);
    }

    @Get(':id')
    @ApiResourceResponse(family.dto)
    get(
      @Param('id', ResourceIdPipe) id: string,
      @AccountId() accountId: string,
      @Res({ passthrough: true }) reply: FastifyReply,
    ): string {
      const found = this.queries.getJson(accountId, id);
      if (!found) throw NotFoundError.of(resource, id);
      reply.header('etag', etagOf(found.version)).type(JSON_CONTENT_TYPE);
      return found.json;
    }

    /** The resource's events, oldest first, from the store itself (complete the moment a write returns). */
    @Get(':id/history')
    @ApiHistoryResponse()
    history(
      @Param('id', ResourceIdPipe) id: string,
      @Query() query: PageQueryDto,
      @AccountId() accountId: string,
    ): Promise<Page<HistoryItem>> {
      return historyOf(family, { store: this.store, cursors: this.cursors }, { id, query, accountId });
    }
  }
  // The list's query is the family's DTO (its filters), not the PageQueryDto of this generic
  // signature: what the ValidationPipe validates and the OpenAPI document describes.
  setParamType(FamilyControllerBase, 'list', 0, family.listQuery);
  return FamilyControllerBase;
}

/** `GET /:id/history`: a page of the resource's stream; a 404 once `deletedBy` ended it. */
async function historyOf<V>(
  family: FamilyRoutes<V>,
  { store, cursors }: { readonly store: EventStore; readonly cursors: CursorCodec },
  { id, query, accountId }: { readonly id: string; readonly query: PageQueryDto; readonly accountId: string },
): Promise<Page<HistoryItem>> {
  const resource = family.aggregate.streamPrefix;
  const collection = `${family.path}/history`;
  const streamId = streamName(resource, id);
  const notFound = () => NotFoundError.of(resource, id);
  if (family.deletedBy) {
    const [last] = await store.readStream(streamId, { direction: 'backwards', fromRevision: 'end', maxCount: 1 });
    if (last?.type === family.deletedBy) throw notFound();
  }
  const page = pageRequest<number>(query, collection, 'number', cursors);
  return readHistory({ store, streamId, accountId, page, collection, notFound });
}

/** The injected services and the write helpers a family's own routes answer with (`created`, `written`). */
function familyBase<V extends ResourceAnswer>(family: FamilyRoutes<V>) {
  abstract class FamilyWrites {
    // Property injection, so a family's controller may add a constructor of its own without repeating these.
    @Inject(CommandBus) protected readonly commands!: CommandBus;
    @Inject(family.queries) protected readonly queries!: FamilyReads<V>;
    @Inject(ReadYourWrites) protected readonly readYourWrites!: ReadYourWrites;
    @Inject(EVENT_STORE) protected readonly store!: EventStore;
    @Inject(CursorCodec) protected readonly cursors!: CursorCodec;

    /** The account's resource, or a 404. */
    protected found(accountId: string, id: string): V {
      const view = this.queries.get(accountId, id);
      if (!view) throw NotFoundError.of(family.aggregate.streamPrefix, id);
      return view;
    }

    /** A create's answer: `written`, plus `Location` (the route declares 201). */
    protected async created(reply: FastifyReply, command: WriteCommand<{ id: string }>): Promise<string> {
      const { id, json } = await this.answer(reply, command);
      reply.header('location', `${EXTERNAL_API_PATH}/${family.path}/${id}`);
      return json;
    }

    /**
     * Sends the command, then read-your-writes: waits until the read model has the write and
     * answers its stored JSON with its ETag, as a GET would; if the projections are late (the
     * wait is bounded), the command's state serialised.
     */
    protected async written(reply: FastifyReply, command: WriteCommand<{ id: string }>): Promise<string> {
      return (await this.answer(reply, command)).json;
    }

    private async answer(
      reply: FastifyReply,
      command: WriteCommand<{ id: string }>,
    ): Promise<{ readonly id: string; readonly json: string }> {
      const result = await this.commands.execute(command);
      await this.readYourWrites.await(result.position);
      const { id } = result.resource;
      reply.type(JSON_CONTENT_TYPE);
      const found = this.queries.getJson(requireAccount(command.context), id);
      if (found) {
        reply.header('etag', etagOf(found.version));
        return { id, json: found.json };
      }
      return { id, json: JSON.stringify(withETag(reply, this.queries.view(result.resource))) };
    }
  }
  return FamilyWrites;
}

type FamilyBase<V extends ResourceAnswer> = ReturnType<typeof readRoutes<V>>;

/** `PATCH /:id`: the aggregate's `update` command, answered as a GET would. */
function withPatch<V extends ResourceAnswer>(
  Base: FamilyBase<V>,
  family: FamilyRoutes<V>,
  body: Type<object>,
): FamilyBase<V> {
  abstract class PatchRoute extends Base {
    @Patch(':id')
    @ApiResourceResponse(family.dto)
    update(
      @Param('id', ResourceIdPipe) id: string,
      @Body() changes: object,
      @IfMatch() ifMatch: StreamRevision | undefined,
      @Ctx() ctx: CommandContext,
      @Res({ passthrough: true }) reply: FastifyReply,
    ): Promise<string> {
      const command = { kind: 'update', id, changes, expected_version: expectedVersion(ifMatch) };
      return this.written(reply, family.aggregate.command(ctx, command as never));
    }
  }
  setParamType(PatchRoute, 'update', 1, body);
  return PatchRoute;
}

/** `POST /`: the aggregate's `create` command for a new id; 201 with Location. */
function withPost<V extends ResourceAnswer>(
  Base: FamilyBase<V>,
  family: FamilyRoutes<V>,
  body: Type<object>,
): FamilyBase<V> {
  abstract class PostRoute extends Base {
    @Post()
    @ApiResourceResponse(family.dto, { created: true })
    create(
      @Body() input: object,
      @Ctx() ctx: CommandContext,
      @Res({ passthrough: true }) reply: FastifyReply,
    ): Promise<string> {
      return this.created(reply, family.aggregate.create(ctx, { kind: 'create', input } as never));
    }
  }
  setParamType(PostRoute, 'create', 0, body);
  return PostRoute;
}

/** Replaces the emitted `design:paramtypes` of one parameter (what the pipes and the OpenAPI explorer read). */
function setParamType(
  target: abstract new (...args: never[]) => unknown,
  method: string,
  index: number,
  type: Type<unknown>,
): void {
  const prototype = target.prototype as object;
  const types = [...((Reflect.getMetadata('design:paramtypes', prototype, method) as unknown[]) ?? [])];
  types[index] = type;
  Reflect.defineMetadata('design:paramtypes', types, prototype, method);
}
