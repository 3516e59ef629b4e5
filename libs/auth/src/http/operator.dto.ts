import { IsOptionalNonNull } from '@filing/platform';
import { IsBoolean, IsNotEmpty, IsString, IsUUID, MaxLength } from 'class-validator';
import { MAX_ACCOUNT_NAME } from '../account';

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
