import { type ArgumentMetadata, Injectable, type PipeTransform } from '@nestjs/common';
import { isUuid } from '../domain/field-rules';
import { ValidationError } from '../errors/domain-errors';

/**
 * `@Param('id', ResourceIdPipe) id: string`: a path id that is not a UUID is a 400 naming the
 * parameter (not a 404: the client sent something that can never name a resource). Lower-cased,
 * as ids are stored.
 */
@Injectable()
export class ResourceIdPipe implements PipeTransform<unknown, string> {
  transform(value: unknown, metadata: ArgumentMetadata): string {
    const field = metadata.data ?? 'id';
    if (!isUuid(value)) throw ValidationError.field(field, `${field} must be a UUID`);
    return value.toLowerCase();
  }
}
