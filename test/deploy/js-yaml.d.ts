/**
 * js-yaml comes with the test tooling (Jest's coverage loader depends on it) and has no types in
 * this tree: the one function the deployment checks use.
 */
declare module 'js-yaml' {
  export function load(text: string): unknown;
}
