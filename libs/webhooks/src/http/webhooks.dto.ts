import { PageQueryDto } from '@filing/platform';
import { ArrayMaxSize, IsArray, IsBoolean, IsDefined, IsIn, IsOptional, IsString, MaxLength, ValidateIf } from 'class-validator';

export class CreateEndpointDto {
  @IsDefined()
  @IsString()
  @MaxLength(2048)
  url!: string;

  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsString()
  @MaxLength(500)
  description?: string | null;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(20)
  @IsString({ each: true })
  event_types?: string[];
}

export class UpdateEndpointDto {
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  url?: string;

  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsString()
  @MaxLength(500)
  description?: string | null;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(20)
  @IsString({ each: true })
  event_types?: string[];
}

export class SettingsDto {
  @IsDefined()
  @IsBoolean()
  notifications_enabled!: boolean;
}

export class DeliveriesQueryDto extends PageQueryDto {
  @IsOptional()
  @IsIn(['pending', 'delivered', 'failed', 'cancelled'])
  status?: string;
}
