/**
 * The size rule of docs/contributing.md ("Small pieces"): in libs/ and apps/ (specs aside) a file
 * stays within 300 lines and a function within 50, unless the allow-list (source-size.allow.json)
 * names it with a one-line reason. Test code (specs, a lib's `testing/`) is left out. The list only shrinks: its ceilings are in the spec.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as ts from 'typescript';

export const MAX_FILE_LINES = 300;
export const MAX_FUNCTION_LINES = 50;

export interface Offender {
  /** Repository-relative path. */
  readonly file: string;
  /** The function's name (`Class.method`, `name`, or `<anonymous>:<line>`); absent for a whole file. */
  readonly function?: string;
  readonly lines: number;
}

export function sourceFiles(root: string, dirs: readonly string[] = ['libs', 'apps']): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        // A lib's testing/ folder is test code (suites, fixtures), like its specs.
        if (!['node_modules', 'dist', 'testing'].includes(entry.name)) walk(path);
      } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') && !entry.name.endsWith('.d.ts')) {
        out.push(path);
      }
    }
  };
  for (const dir of dirs) walk(join(root, dir));
  return out.sort();
}

/** Files over MAX_FILE_LINES and functions over MAX_FUNCTION_LINES in `text`. */
export function offendersIn(file: string, text: string): Offender[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line + 1;
  const found: Offender[] = [];
  const fileLines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  if (fileLines > MAX_FILE_LINES) found.push({ file, lines: fileLines });
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const lines = lineOf(node.getEnd()) - lineOf(node.getStart(source)) + 1;
      if (lines > MAX_FUNCTION_LINES) found.push({ file, function: functionName(node, lineOf), lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function functionName(node: ts.Node, lineOf: (pos: number) => number): string {
  const named = (n: ts.Node): string | undefined => {
    const name = (n as { name?: ts.Node }).name;
    return name && (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isPrivateIdentifier(name))
      ? name.text
      : undefined;
  };
  const own = named(node) ?? (ts.isConstructorDeclaration(node) ? 'constructor' : undefined);
  const parent = node.parent;
  const fromParent = ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) ? named(parent) : undefined;
  const base = own ?? fromParent ?? `<anonymous>:${lineOf(node.getStart())}`;
  const owner = ts.isClassLike(parent) ? named(parent) : undefined;
  return owner ? `${owner}.${base}` : base;
}

export function offenders(root: string): Offender[] {
  return sourceFiles(root).flatMap((path) => offendersIn(relative(root, path), readFileSync(path, 'utf8')));
}
