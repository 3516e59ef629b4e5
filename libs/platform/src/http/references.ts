import { extend } from '../domain/extend';
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { Global, Inject, Injectable, Module } from '@nestjs/common';
import { type FieldError, ValidationError } from '../errors/domain-errors';
import { ReadYourWrites } from './read-your-writes';

/** Answers whether a resource of one kind exists in an account (a read-model lookup). */
export type ReferenceLookup = (accountId: string, id: string) => boolean;

/**
 * References between families (`entity_id`, `order_id`) checked within the account, without one
 * context importing another's read model: the owner registers a lookup for its kind (`entity`),
 * the referrer asks by field name (`entity_id` → kind `entity`).
 */
@Injectable()
export class ReferenceChecker {
  private readonly lookups = new Map<string, ReferenceLookup>();

  constructor(
    private readonly readYourWrites: ReadYourWrites,
    @Inject(EVENT_STORE) private readonly store: EventStore,
  ) {}

  /** Called by the owning module at init, e.g. `register('entity', (acc, id) => queries.exists(acc, id))`. */
  register(kind: string, lookup: ReferenceLookup): void {
    if (this.lookups.has(kind)) throw new Error(`A reference lookup for ${kind} is already registered`);
    this.lookups.set(kind, lookup);
  }

  /**
   * Throws one 400 listing every field whose id does not exist in the account. Null and undefined
   * fields are skipped (optional references). A miss is checked again once the read models have
   * caught up with the store's head, so a resource created by an earlier request is always seen,
   * even if that request's own read-your-writes wait timed out.
   */
  async assertExist(accountId: string, references: Readonly<Record<string, string | null | undefined>>): Promise<void> {
    const fields = Object.entries(references).filter((e): e is [string, string] => typeof e[1] === 'string');
    let missing = this.missing(accountId, fields);
    if (missing.length > 0) {
      await this.readYourWrites.await(await this.store.headPosition());
      missing = this.missing(accountId, missing);
    }
    if (missing.length > 0) {
      throw new ValidationError(
        missing.map(([field, id]): FieldError => ({
          field,
          message: `${field} ${id} does not name an existing ${kindOf(field)}`,
        })),
      );
    }
  }

  /**
   * `input` with its reference `fields` lower-cased (ids are stored so; a client may send a UUID
   * in capitals), once each one present is known to exist in the account ({@link assertExist}).
   */
  async normalized<T extends object>(accountId: string, input: T, fields: readonly string[]): Promise<T> {
    const lowered: Record<string, string> = {};
    for (const field of fields) {
      const id = (input as Record<string, unknown>)[field];
      if (typeof id === 'string') lowered[field] = id.toLowerCase();
    }
    await this.assertExist(accountId, lowered);
    return extend(input, lowered) as T;
  }

  private missing(accountId: string, fields: readonly [string, string][]): [string, string][] {
    return fields.filter(([field, id]) => !this.lookup(field)(accountId, id));
  }

  private lookup(field: string): ReferenceLookup {
    const lookup = this.lookups.get(kindOf(field));
    if (!lookup) throw new Error(`No reference lookup registered for ${field}`);
    return lookup;
  }
}

/** `entity_id` → `entity`. */
function kindOf(field: string): string {
  return field.replace(/_id$/, '');
}

/**
 * Provides the one ReferenceChecker to every module, in the service (through ResourceApiModule)
 * and in the CLI. Families register their lookups in their core module, which both apps import.
 */
@Global()
@Module({ providers: [ReferenceChecker], exports: [ReferenceChecker] })
export class ReferencesModule {}
