/**
 * A sixth resource family, `notes` (a note about an entity), declared in the steps of
 * docs/resource-conventions.md — its events, its domain, its aggregate, table, queries, DTOs and
 * controller, and a module listing them — for test/e2e/declared-family.e2e.spec.ts, which proves
 * that the declaration alone gives a family its routes, events, projection and OpenAPI entries.
 * One file for brevity; a real family splits it as the conventions' layout says.
 */
import {
  ApiResourceFields,
  assertCreatable,
  type CreateCommand,
  decidePatch,
  defineAggregate,
  type DomainEvent,
  FamilyController,
  fieldProblems,
  IsOptionalNonNull,
  IsResourceId,
  missingFields,
  orNull,
  PageQueryDto,
  type PatchCommand,
  RegisterProjection,
  type Resource,
  ResourceDto,
  resourceEvolver,
  resourceIdRule,
  ResourceProjection,
  ResourceQueries,
  type ResourceTable,
  type ResourceView,
  SatisfiesRule,
  textRule,
  unknownFields,
} from '@filing/platform';
import { Controller, Module } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';

// 1. Events (`note.events.ts`): explicit names, plain JSON carrying the note as it is after each one.
export const NOTE_CREATED = 'notes.NoteCreated';
export const NOTE_UPDATED = 'notes.NoteUpdated';
export type NoteFields = { readonly entity_id: string; readonly title: string; readonly body: string | null };
export const NOTE_FIELDS = ['entity_id', 'title', 'body'] as const satisfies readonly (keyof NoteFields)[];
export type NoteEvent =
  | DomainEvent<typeof NOTE_CREATED, NoteFields & { readonly note_id: string }>
  | DomainEvent<typeof NOTE_UPDATED, NoteFields & { readonly note_id: string; readonly changed: ('title' | 'body')[] }>;

// 2. Domain (`note.ts`): field rules, evolve, decide; pure.
const CREATE_FIELDS = ['entity_id', 'title', 'body'] as const;
const WRITABLE_FIELDS = ['title', 'body'] as const;
const titleProblem = textRule('title', 100);
const bodyProblem = textRule('body', 2000);
const fieldErrors = (fields: object) =>
  fieldProblems(fields, { entity_id: resourceIdRule('entity_id'), title: titleProblem, body: orNull(bodyProblem) });

export type Note = Resource<NoteFields>;
type NoteInput = Readonly<{ entity_id: string; title: string; body?: string | null }>;
type NoteCommand =
  CreateCommand<'create', NoteInput> | PatchCommand<{ readonly title?: string; readonly body?: string | null }>;

const evolve = resourceEvolver<NoteFields, NoteEvent>(NOTE_CREATED, 'note_id', NOTE_FIELDS);

function decide(state: Note | null, command: NoteCommand): NoteEvent[] {
  if (command.kind === 'create') {
    const { input } = command;
    const fields = { entity_id: input.entity_id, title: input.title, body: input.body ?? null };
    const errors = [
      ...missingFields(input, ['entity_id', 'title']),
      ...fieldErrors(fields),
      ...unknownFields(input, CREATE_FIELDS),
    ];
    assertCreatable(state, 'note', command.id, errors);
    return [{ type: NOTE_CREATED, data: { note_id: command.id, ...fields } }];
  }
  const { next, changed } = decidePatch(state, command, 'note', {
    fields: NOTE_FIELDS,
    writable: WRITABLE_FIELDS,
    fieldErrors,
  });
  return changed.length === 0 ? [] : [{ type: NOTE_UPDATED, data: { note_id: command.id, ...next, changed } }];
}

// 3. Aggregate (`note.aggregate.ts`): streams `note-<id>`; entity_id must name an entity of the account.
export const NoteAggregate = defineAggregate({
  streamPrefix: 'note',
  initialState: null as Note | null,
  evolve,
  decide,
  references: ['entity_id'],
});

// 4. Read model (`read-model/`): the table, its projection, its queries.
export const NOTES_TABLE: ResourceTable = {
  name: 'notes',
  idField: 'note_id',
  filters: { entity: 'entity_id' },
  columns: 'entity_id TEXT NOT NULL, title TEXT NOT NULL, body TEXT',
};
@RegisterProjection()
export class NotesProjection extends ResourceProjection.of(NOTES_TABLE) {}
export class NotesQueries extends ResourceQueries.of<ResourceView<NoteFields>, { entity_id?: string }>(NOTES_TABLE) {}

// 5. HTTP (`http/`): the DTOs (validation and OpenAPI from one class each) and the controller.
const ID = { type: String, format: 'uuid' };
const TITLE = { type: String, maxLength: 100, example: 'Call the registered agent' };
const BODY = { type: String, nullable: true, maxLength: 2000 };
const IsTitle = () => SatisfiesRule('isNoteTitle', titleProblem);
const IsBody = () => SatisfiesRule('isNoteBody', bodyProblem);

class CreateNoteDto {
  @ApiProperty({ ...ID, description: 'An entity of the same account' }) @IsResourceId() entity_id!: string;
  @ApiProperty(TITLE) @IsTitle() title!: string;
  @ApiPropertyOptional(BODY) @IsOptional() @IsBody() body?: string | null;
}

class UpdateNoteDto {
  @ApiPropertyOptional(TITLE) @IsOptionalNonNull() @IsTitle() title?: string;
  @ApiPropertyOptional({ ...BODY, description: 'null clears it' }) @IsOptional() @IsBody() body?: string | null;
}

@ApiResourceFields()
class NoteDto extends ResourceDto {
  @ApiProperty(ID) entity_id!: string;
  @ApiProperty(TITLE) title!: string;
  @ApiProperty(BODY) body!: string | null;
}

class ListNotesQueryDto extends PageQueryDto {
  @ApiPropertyOptional(ID) @IsOptional() @IsResourceId() entity_id?: string;
}

@Controller('external-api/v1/notes')
class NotesController extends FamilyController({
  path: 'notes',
  aggregate: NoteAggregate,
  dto: NoteDto,
  listQuery: ListNotesQueryDto,
  queries: NotesQueries,
  create: CreateNoteDto,
  update: UpdateNoteDto,
}) {}

// 6. Module: what the service imports (a real family: its CoreModule in the CLI too, for replay and audit).
@Module({ providers: [NoteAggregate.Handler, NotesProjection, NotesQueries], controllers: [NotesController] })
export class NotesModule {}
