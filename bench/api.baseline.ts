/**
 * The list's two baselines for `npm run bench -- api`, each in its own process (run as
 * `api.baseline.ts <bare|raw> <service DATA_DIR>`), neither using our stack:
 *
 * - `bare`: Fastify 5 alone answering a literal body, the service's own first page of 50 entities
 *   (read once from the service's read model): what the HTTP layer alone costs.
 * - `raw`: Fastify 5 + better-sqlite3 doing today's work by hand: the bearer token's SHA-256 looked
 *   up in a copy of `oauth_tokens` (expiry and revocation checked), then
 *   `SELECT * ... WHERE account_id = ? ORDER BY id LIMIT 51` on a copy of the `entities` table
 *   (today's columns and index), the rows' API fields picked, a signed next_cursor, and
 *   JSON.stringify of the page.
 *
 * Prints one JSON line `{url}` on stdout once listening, then serves until SIGTERM.
 */
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { answerCpuUsage } from './report';

/** Today's `entities` table (the service's may hold more columns, e.g. a rendered answer). */
const ENTITY_SCHEMA =
  'id TEXT PRIMARY KEY, account_id TEXT NOT NULL, name TEXT NOT NULL, name_folded TEXT NOT NULL, ' +
  'entity_type TEXT NOT NULL, status TEXT NOT NULL, formation_jurisdiction TEXT, formation_date TEXT, ' +
  'created_at TEXT NOT NULL, updated_at TEXT NOT NULL, version INTEGER NOT NULL';
const ENTITY_COLUMNS = ENTITY_SCHEMA.split(',').map((column) => column.trim().split(/\s+/)[0]);
/** What the API answers of a row: all but the account and the query-only folded name. */
const ANSWERED = ENTITY_COLUMNS.filter((c) => c !== 'account_id' && c !== 'name_folded');
const TOKEN_COLUMNS = [
  'token_hash',
  'client_id',
  'account_id',
  'scopes',
  'issued_at',
  'expires_at',
  'client_secret_generation',
  'revoked',
];

/** A private copy of today's two tables from the service's read model, in a database of its own. */
function copyTables(serviceDataDir: string): { db: Database.Database; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'bench-api-raw-'));
  const db = new Database(join(dir, 'raw.db'));
  db.pragma('journal_mode = WAL');
  db.exec(`ATTACH DATABASE '${join(serviceDataDir, 'read.db')}' AS src`);
  db.exec(`
    CREATE TABLE entities (${ENTITY_SCHEMA});
    CREATE INDEX entities_by_account ON entities (account_id, id);
    INSERT INTO entities SELECT ${ENTITY_COLUMNS.join(', ')} FROM src.entities;
    CREATE TABLE oauth_tokens (
      token_hash TEXT PRIMARY KEY, client_id TEXT NOT NULL, account_id TEXT, scopes TEXT NOT NULL,
      issued_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, client_secret_generation INTEGER NOT NULL,
      revoked INTEGER NOT NULL DEFAULT 0);
    INSERT INTO oauth_tokens SELECT ${TOKEN_COLUMNS.join(', ')} FROM src.oauth_tokens;
  `);
  db.exec('DETACH DATABASE src');
  return { db, dir };
}

async function main(): Promise<void> {
  const [mode, serviceDataDir] = process.argv.slice(2);
  const app = Fastify({ logger: false });
  let cleanup = () => {};

  if (mode === 'bare') {
    const { db, dir } = copyTables(serviceDataDir);
    const rows = db.prepare(`SELECT * FROM entities ORDER BY id LIMIT 50`).all() as Record<string, unknown>[];
    const body = JSON.stringify({ data: rows.map(pick), next_cursor: 'x'.repeat(120) });
    db.close();
    rmSync(dir, { recursive: true, force: true });
    app.get('/external-api/v1/entities', (_request, reply) => {
      void reply.type('application/json; charset=utf-8').send(body);
    });
  } else if (mode === 'raw') {
    const { db, dir } = copyTables(serviceDataDir);
    cleanup = () => {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    };
    const tokenLookup = db.prepare('SELECT * FROM oauth_tokens WHERE token_hash = ?');
    const page = db.prepare('SELECT * FROM entities WHERE account_id = ? ORDER BY id LIMIT ?');
    const cursorKey = randomBytes(32);
    app.get('/external-api/v1/entities', (request, reply) => {
      const header = request.headers.authorization ?? '';
      const row = header.startsWith('Bearer ')
        ? (tokenLookup.get(createHash('sha256').update(header.slice(7)).digest('hex')) as
            { account_id: string; expires_at: number; revoked: number; scopes: string } | undefined)
        : undefined;
      if (!row || row.revoked !== 0 || Date.now() >= row.expires_at || !row.scopes.split(' ').includes('read')) {
        void reply.code(401).send({ error: 'invalid_token' });
        return;
      }
      const limit = Number((request.query as { limit?: string }).limit ?? 50);
      const rows = page.all(row.account_id, limit + 1) as Record<string, unknown>[];
      const data = rows.slice(0, limit).map(pick);
      let nextCursor: string | null = null;
      if (rows.length > limit) {
        const payload = Buffer.from(JSON.stringify({ v: 2, c: 'entities', k: data[data.length - 1].id }));
        const tag = createHmac('sha256', cursorKey).update(payload).digest().subarray(0, 16);
        nextCursor = Buffer.concat([tag, payload]).toString('base64url');
      }
      void reply.type('application/json; charset=utf-8').send(JSON.stringify({ data, next_cursor: nextCursor }));
    });
  } else {
    throw new Error(`Unknown baseline ${mode}: bare or raw`);
  }
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  answerCpuUsage();
  process.stdout.write(JSON.stringify({ url }) + '\n');
  process.once('SIGTERM', () => {
    void app.close().finally(() => {
      cleanup();
      process.exit(0);
    });
  });
}

function pick(row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(ANSWERED.map((c) => [c, row[c]]));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
