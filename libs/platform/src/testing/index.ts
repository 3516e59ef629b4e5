/**
 * The platform's helpers for the families' unit specs, imported as `@filing/platform/testing`
 * (never by production code: dependency-cruiser allows it to specs only).
 */
export * from './domain';
export * from './decider-specification';
export * from './read-model';
