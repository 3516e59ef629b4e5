import { IsOptionalNonNull } from '@filing/platform';
import { IsBoolean, IsInt, IsNotEmpty, IsString, IsUUID, Max, MaxLength, Min } from 'class-validator';
import { MAX_ACCOUNT_NAME } from '../account';
import { MAX_PREVIOUS_SECRET_SECONDS } from '../client';

export class CreateAccountDto {
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_ACCOUNT_NAME)
  name!: string;
}

/**
 * A customer client `{account_id, scope?}`, or an operator client `{operator: true}`. A field may
 * be left out but not sent as null (a 400 naming it, as on the external API).
 */
export class CreateClientDto {
  @IsOptionalNonNull()
  @IsUUID()
  account_id?: string;

  @IsOptionalNonNull()
  @IsString()
  @IsNotEmpty()
  scope?: string;

  @IsOptionalNonNull()
  @IsBoolean()
  operator?: boolean;
}

export class CreateUserDto {
  @IsUUID()
  account_id!: string;

  @IsString()
  @IsNotEmpty()
  email!: string;

  @IsString()
  @IsNotEmpty()
  password!: string;
}

/** `{previous_secret_expires_in?}`: seconds the replaced secret keeps working (0–604800, default 0). */
export class RotateClientSecretDto {
  @IsOptionalNonNull()
  @IsInt({ message: 'previous_secret_expires_in must be a whole number of seconds' })
  @Min(0, { message: `previous_secret_expires_in must be from 0 to ${MAX_PREVIOUS_SECRET_SECONDS} seconds` })
  @Max(MAX_PREVIOUS_SECRET_SECONDS, {
    message: `previous_secret_expires_in must be from 0 to ${MAX_PREVIOUS_SECRET_SECONDS} seconds (7 days)`,
  })
  previous_secret_expires_in?: number;
}
