export * from './config/config';
export * from './logging/logger';
export * from './errors/domain-errors';
export * from './events/envelope';
export * from './commands/handle-command';
export * from './commands/handle-command';
