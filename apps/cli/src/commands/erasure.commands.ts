import { parseArgs } from 'node:util';
import { DeleteDocumentCommand, DocumentKeys } from '@filing/documents';
import { SecretKeys } from '@filing/webhooks';
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { extend, isUuid, SecretBox } from '@filing/platform';
import {
  type CliCommand,
  CommandFailedError,
  executeCommand,
  operatorContext,
  printJson,
  UsageError,
} from '../cli-command';

/** Progress on stderr (stdout carries the command's JSON): every 100th step and the last. */
function progressOn(what: string): (done: number, total: number) => void {
  return (done, total) => {
    if (done % 100 === 0 || done === total) process.stderr.write(`${what}: ${done}/${total}\n`);
  };
}

/**
 * `secrets:reseal`: after a SECRETS_KEY rotation (the new key in SECRETS_KEY, the old one in
 * SECRETS_KEY_PREVIOUS), every document key and webhook signing secret sealed under the old one is
 * sealed anew and its older versions truncated (sqlite: removed from events.db). Idempotent and resumable: run it again
 * after an interruption. docs/operations.md, "Rotating SECRETS_KEY".
 */
export const secretsResealCommand: CliCommand = {
  name: 'secrets:reseal',
  usage: 'secrets:reseal',
  summary: 'Re-seal document keys and webhook secrets under the current SECRETS_KEY; remove old versions',
  async run(app, args, out) {
    parseArgs({ args, options: {}, strict: true });
    const documentKeys = await app.get(DocumentKeys).resealAll(progressOn('document keys'));
    const webhookSecrets = await app.get(SecretKeys).resealAll(progressOn('webhook endpoints'));
    printJson(out, { key_id: app.get(SecretBox).keyId, document_keys: documentKeys, webhook_secrets: webhookSecrets });
  },
};

/**
 * `documents:encrypt`: the one-time migration of a data dir made before content encryption.
 * docs/orders-and-documents.md, "Encryption and erasure".
 */
export const documentsEncryptCommand: CliCommand = {
  name: 'documents:encrypt',
  usage: 'documents:encrypt',
  summary: 'Encrypt the content of documents stored before encryption; remove deleted ones’ bytes',
  async run(app, args, out) {
    parseArgs({ args, options: {}, strict: true });
    printJson(out, await app.get(DocumentKeys).encryptLegacy(progressOn('plaintext content streams')));
  },
};

/**
 * `accounts:erase ID --confirm ID`: deletes the account's live documents and webhook endpoints,
 * destroys the data key of every document and the signing secrets of every endpoint it ever had,
 * then records an `erasure.AccountErased` event. The
 * history (event types, times, ids) stays for audit.
 */
export const accountsEraseCommand: CliCommand = {
  name: 'accounts:erase',
  usage: 'accounts:erase ACCOUNT_ID --confirm ACCOUNT_ID',
  summary: "Destroy the keys of an account's documents and webhook secrets (irreversible)",
  async run(app, args, out) {
    const { positionals, values } = parseArgs({
      args,
      options: { confirm: { type: 'string' } },
      allowPositionals: true,
      strict: true,
    });
    if (positionals.length !== 1) throw new UsageError(`Expected one account id (${this.usage})`);
    const id = positionals[0].toLowerCase();
    if (!isUuid(id)) throw new UsageError(`Not an account id (a UUID): ${positionals[0]}`);
    if (values.confirm?.toLowerCase() !== id) {
      throw new UsageError(`Erasure cannot be undone: repeat the account id as --confirm ${id}`);
    }
    const store = app.get<EventStore>(EVENT_STORE);
    if ((await store.readStream(`account-${id}`, { maxCount: 1 })).length === 0) {
      throw new CommandFailedError(`No account ${id}`);
    }
    const context = extend(operatorContext(), { account_id: id });
    const keys = app.get(DocumentKeys);
    const documentIds = await keys.eraseAccount(id, async (documentId) => {
      await executeCommand(app, new DeleteDocumentCommand(context, documentId));
    });
    const endpointIds = await app.get(SecretKeys).eraseAccount(context, id);
    await keys.recordErasure(context, id, documentIds, endpointIds);
    printJson(out, {
      account_id: id,
      documents_erased: documentIds.length,
      webhook_endpoints_erased: endpointIds.length,
    });
  },
};
