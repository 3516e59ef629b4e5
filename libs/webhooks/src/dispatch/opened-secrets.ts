import { type SecretBox, SecretBoxError } from '@filing/platform';
import type { DeliveryTarget } from '../deliveries/delivery';
import { secretContext } from '../endpoints/endpoint.events';

/** Opened signing secrets kept (two per endpoint during a rotation's overlap). */
const UNSEALED_LIMIT = 10_000;

/**
 * The endpoints' signing secrets as the sender needs them: opened once from their sealed form
 * and kept, so an attempt costs no decryption. By endpoint, then by sealed form (a rotation seals
 * a new one): two levels, not one key joining both, because the target's strings are the read
 * model's cached ones, hashed once, where a joined key would be built and hashed on every
 * attempt. Rotations add keys: past the limit it starts over rather than grow without bound.
 */
export class OpenedSecrets {
  private readonly unsealed = new Map<string, Map<string, string>>();
  private count = 0;

  constructor(
    private readonly box: SecretBox,
    /** Told of a secret this instance cannot open (a SECRETS_KEY problem); it is left out. */
    private readonly onUnopenable: (endpointId: string, error: SecretBoxError) => void,
  ) {}

  of(target: DeliveryTarget): string[] {
    const opened: string[] = [];
    for (const sealed of target.signingSecrets) {
      const secret = this.unsealed.get(target.endpointId)?.get(sealed) ?? this.open(target.endpointId, sealed);
      if (secret !== undefined) opened.push(secret);
    }
    return opened;
  }

  private open(endpointId: string, sealed: string): string | undefined {
    let secret: string;
    try {
      secret = this.box.open(sealed, secretContext(endpointId));
    } catch (err) {
      if (!(err instanceof SecretBoxError)) throw err;
      this.onUnopenable(endpointId, err);
      return undefined;
    }
    if (this.count >= UNSEALED_LIMIT) {
      this.unsealed.clear();
      this.count = 0;
    }
    let ofEndpoint = this.unsealed.get(endpointId);
    if (!ofEndpoint) this.unsealed.set(endpointId, (ofEndpoint = new Map<string, string>()));
    ofEndpoint.set(sealed, secret);
    this.count++;
    return secret;
  }
}
