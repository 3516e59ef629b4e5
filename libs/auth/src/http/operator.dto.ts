import { IsBoolean, IsNotEmpty, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';
import { MAX_ACCOUNT_NAME } from '../account';

export class CreateAccountDto {
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_ACCOUNT_NAME)
  name!: string;
}

/** A customer client `{account_id, scope?}`, or an operator client `{operator: true}`. */
export class CreateClientDto {
  @IsOptional()
  @IsUUID()
  account_id?: string;

  @IsOptional()
  @IsString()
  @IsNotEmpty()
  scope?: string;

  @IsOptional()
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
