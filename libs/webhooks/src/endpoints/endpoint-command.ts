import type { DisabledReason } from './endpoint.events';

/** Every command names the account it acts for: another account's endpoint is "not found". */
export type EndpointCommand =
  | {
      readonly kind: 'create';
      readonly accountId: string;
      readonly endpointId: string;
      readonly url: string;
      readonly description: string | null;
      readonly eventTypes: readonly string[];
      readonly rateLimitPerSecond: number | null;
      readonly secretFingerprint: string;
      /** Absent since signing secrets live in key streams (secrets/secret-keys.ts). */
      readonly secretSealed?: string;
      /** The account's endpoints (not deleted) as the read model holds them, caught up with the store. */
      readonly accountEndpoints: number;
      /** WEBHOOK_MAX_ENDPOINTS_PER_ACCOUNT. */
      readonly maxEndpoints: number;
    }
  | {
      readonly kind: 'update';
      readonly accountId: string;
      readonly endpointId: string;
      readonly url?: string;
      readonly description?: string | null;
      readonly eventTypes?: readonly string[];
      /** null clears the limit; absent leaves it. */
      readonly rateLimitPerSecond?: number | null;
    }
  | { readonly kind: 'enable' | 'delete'; readonly accountId: string; readonly endpointId: string }
  | {
      readonly kind: 'disable';
      readonly accountId: string;
      readonly endpointId: string;
      readonly reason: DisabledReason;
      /** An auto-disable's evidence (`failing`): the failed attempts it was judged on, first and last. */
      readonly failing?: { readonly since: string; readonly lastFailureAt: string };
    }
  /** The system reports a failing streak (WEBHOOK_FAILING_AFTER): once per streak, only while enabled. */
  | {
      readonly kind: 'report-failing';
      readonly accountId: string;
      readonly endpointId: string;
      readonly failing: { readonly since: string; readonly lastFailureAt: string };
    }
  | {
      readonly kind: 'rotate-secret';
      readonly accountId: string;
      readonly endpointId: string;
      readonly secretFingerprint: string;
      /** Absent since signing secrets live in key streams (secrets/secret-keys.ts). */
      readonly secretSealed?: string;
      readonly now: Date;
    }
  /**
   * The system seals a secret of the endpoint anew (an import, a re-seal under a new key). Applies
   * only while `replaces` is still what the stream holds for that fingerprint, so of several
   * instances doing it at once one writes; and only for the current or previous secret.
   */
  | {
      readonly kind: 'seal-secret';
      readonly endpointId: string;
      readonly fingerprint: string;
      readonly sealed: string;
      readonly replaces: string | null;
    };
