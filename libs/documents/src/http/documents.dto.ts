import {
  ApiResourceFields,
  ResourceDto,
  IsOptionalNonNull,
  IsResourceId,
  PageQueryDto,
  SatisfiesRule,
} from '@filing/platform';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import {
  base64Problem,
  CONTENT_TYPE_MAX_LENGTH,
  contentTypeProblem,
  DOCUMENT_TYPE_MAX_LENGTH,
  MAX_CONTENT_BYTES,
  documentTypeProblem,
  TITLE_MAX_LENGTH,
  titleProblem,
} from '../document';

/*
 * The DTOs check shape and field rules so that one 400 lists every bad field; the rules are the
 * domain's own predicates (document.ts), so HTTP and decide() cannot drift apart. Property names
 * are the JSON names. Unknown properties are refused by the validation pipe. The @Api*
 * decorators describe the same DTOs in the OpenAPI document.
 */

const ID = { type: String, format: 'uuid' };
const ORDER_ID = { ...ID, nullable: true, description: 'An order of the same account' };
const TITLE = { type: String, maxLength: TITLE_MAX_LENGTH, example: 'Certificate of Formation' };
const DOCUMENT_TYPE = {
  type: String,
  maxLength: DOCUMENT_TYPE_MAX_LENGTH,
  example: 'certificate_of_formation',
  description: 'Free text',
};
const CONTENT_TYPE = {
  type: String,
  maxLength: CONTENT_TYPE_MAX_LENGTH,
  example: 'application/pdf',
  description: 'The media type the content is served with',
};
const CONTENT = {
  type: String,
  format: 'byte',
  description: `The content, standard base64 with padding; at most ${MAX_CONTENT_BYTES} bytes (10 MiB) decoded`,
};

const IsTitle = () => SatisfiesRule('isTitle', titleProblem);
const IsDocumentType = () => SatisfiesRule('isDocumentType', documentTypeProblem);

export class CreateDocumentDto {
  @ApiProperty({ ...ID, description: 'An entity of the same account' }) @IsResourceId() entity_id!: string;
  @ApiPropertyOptional(ORDER_ID) @IsOptional() @IsResourceId() order_id?: string | null;
  @ApiProperty(TITLE) @IsTitle() title!: string;
  @ApiProperty(DOCUMENT_TYPE) @IsDocumentType() document_type!: string;
  @ApiProperty(CONTENT_TYPE) @SatisfiesRule('isContentType', contentTypeProblem) content_type!: string;
  @ApiProperty(CONTENT) @SatisfiesRule('isBase64Content', base64Problem) content_base64!: string;
}

/** PATCH: only the writable metadata; absent fields stay as they are. */
export class UpdateDocumentDto {
  @ApiPropertyOptional(TITLE) @IsOptionalNonNull() @IsTitle() title?: string;
  @ApiPropertyOptional(DOCUMENT_TYPE) @IsOptionalNonNull() @IsDocumentType() document_type?: string;
}

/** The resource (CONTRACT.md §3), for the OpenAPI document; the controller answers `DocumentView`s. */
@ApiResourceFields()
export class DocumentDto extends ResourceDto {
  @ApiProperty(ID) entity_id!: string;
  @ApiProperty(ORDER_ID) order_id!: string | null;
  @ApiProperty(TITLE) title!: string;
  @ApiProperty(DOCUMENT_TYPE) document_type!: string;
  @ApiProperty(CONTENT_TYPE) content_type!: string;
  @ApiProperty({ description: 'Size of the content in bytes', minimum: 1, maximum: MAX_CONTENT_BYTES })
  size_bytes!: number;
  @ApiProperty({ description: 'SHA-256 of the content, lower-case hex', pattern: '^[0-9a-f]{64}$' }) sha256!: string;
}

export class ListDocumentsQueryDto extends PageQueryDto {
  @ApiPropertyOptional(ID) @IsOptional() @IsResourceId() entity_id?: string;
  @ApiPropertyOptional(ID) @IsOptional() @IsResourceId() order_id?: string;
}
