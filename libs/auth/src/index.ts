/** What other modules and the apps may import from auth: its modules, its events, its commands. */
export { AuthModule, AuthCoreModule } from './auth.module';
export * from './auth.events';
export { CreateAccountCommand, type CreateAccountResult } from './commands/create-account';
export { CreateClientCommand, type CreateClientInput, type CreateClientResult } from './commands/create-client';
export {
  ExpirePreviousSecretCommand,
  RotateClientSecretCommand,
  type RotateClientSecretResult,
} from './commands/rotate-client-secret';
export { MAX_PREVIOUS_SECRET_SECONDS } from './client';
export { RevokeClientCommand, type RevokeClientResult } from './commands/revoke-client';
export { CreateUserCommand, type CreateUserInput, type CreateUserResult } from './commands/create-user';
export { VerifyUserPasswordQuery, type VerifiedUser } from './queries/verify-user-password';
export { AccountClientsQuery, type ClientView } from './queries/account-clients';
export { FailedAuthThrottle, DEFAULT_THROTTLE_LIMITS, type ThrottleLimits } from './http/failed-auth-throttle';
export { createdAccountView, createdClientView, createdUserView } from './read-model/views';
