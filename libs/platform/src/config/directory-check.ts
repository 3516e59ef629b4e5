import { accessSync, constants, existsSync, lstatSync, mkdtempSync, rmdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

// Node built-ins only: config.spec.ts runs this file alone, compiled, as another user (root passes
// every permission check), from a world-readable copy, wherever the checkout is.

/**
 * Why the service could not keep its databases in `dir`, or null. An existing `dir` must be a
 * writable directory; a missing one is created at start (recursive mkdir), so its nearest existing
 * ancestor must be a writable directory. Besides access(W_OK), which root always passes, a
 * directory is made and removed there: procfs answers ENOENT to every mkdir, and Node's recursive
 * mkdir then loops forever between the parent (EEXIST) and the child (ENOENT) — the start hung.
 */
export function directoryProblem(dir: string): string | null {
  if (exists(dir)) {
    if (!isDirectory(dir)) {
      return existsTarget(dir)
        ? `must be a directory, but ${dir} is a file`
        : `is a symbolic link to a path that does not exist: ${dir}`;
    }
    const problem = writableProblem(dir);
    return problem && `names a directory this process cannot write in: ${dir} (${problem})`;
  }
  // Not there yet: the start makes it, with its missing parents.
  let ancestor = dirname(dir);
  while (!exists(ancestor) && dirname(ancestor) !== ancestor) ancestor = dirname(ancestor);
  if (!isDirectory(ancestor)) {
    const what = existsTarget(ancestor) ? 'a file' : 'a symbolic link to a path that does not exist';
    return `cannot be created: ${dir} does not exist, and its nearest existing parent ${ancestor} is ${what}, not a directory`;
  }
  const problem = writableProblem(ancestor);
  return (
    problem &&
    `cannot be created: ${dir} does not exist, and its nearest existing parent ${ancestor} takes no new directories (${problem})`
  );
}

const exists = (path: string): boolean => {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
};
const existsTarget = (path: string): boolean => existsSync(path);
const isDirectory = (path: string): boolean => {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
};
export const errorCode = (err: unknown): string => (err as NodeJS.ErrnoException).code ?? (err as Error).message;

function writableProblem(dir: string): string | null {
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch (err) {
    return `no write access: ${errorCode(err)}`;
  }
  try {
    rmdirSync(mkdtempSync(join(dir, '.write-check-')));
  } catch (err) {
    return `making a directory there fails with ${errorCode(err)}`;
  }
  return null;
}
