import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { Inject } from '@nestjs/common';
import { type IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import { AuthEvents, userEmailStream, userStream } from '../auth.events';
import { dummyHash, sha256, verifySecret } from '../crypto/secrets';
import { MAX_PASSWORD_LENGTH, normalizeEmail } from '../user';

/** The user a password was verified for. */
export interface VerifiedUser {
  readonly userId: string;
  readonly accountId: string;
  readonly email: string;
}

/**
 * Sign-in for the settings screen: the user with this email and password, or null (unknown
 * email, wrong password, over-long input). The answer does not say which, and an unknown email
 * costs one scrypt like a wrong password does. Throttling is the caller's job.
 */
export class VerifyUserPasswordQuery extends Query<VerifiedUser | null> {
  constructor(
    readonly email: string,
    readonly password: string,
  ) {
    super();
  }
}

/**
 * Reads the streams, not the read model: the password hash lives only in `auth.UserCreated`
 * (DESIGN.md: secrets stay out of read models). The email's reservation stream names the user.
 */
@QueryHandler(VerifyUserPasswordQuery)
export class VerifyUserPasswordHandler implements IQueryHandler<VerifyUserPasswordQuery, VerifiedUser | null> {
  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  async execute({ email, password }: VerifyUserPasswordQuery): Promise<VerifiedUser | null> {
    const normalized = normalizeEmail(email);
    if (normalized.length === 0 || normalized.length > 254 || password.length > MAX_PASSWORD_LENGTH) {
      await verifySecret(password.slice(0, MAX_PASSWORD_LENGTH), await dummyHash());
      return null;
    }
    const user = await this.userOf(normalized);
    const ok = await verifySecret(password, user?.passwordHash ?? (await dummyHash()));
    return ok && user ? { userId: user.userId, accountId: user.accountId, email: user.email } : null;
  }

  private async userOf(email: string): Promise<(VerifiedUser & { passwordHash: string }) | null> {
    const [reserved] = await this.store.readStream(userEmailStream(sha256(email)), {
      direction: 'forwards',
      fromRevision: 'start',
      maxCount: 1,
    });
    const userId = reserved?.type === AuthEvents.UserEmailReserved ? reserved.data.user_id : null;
    if (typeof userId !== 'string') return null;
    const [created] = await this.store.readStream(userStream(userId), {
      direction: 'forwards',
      fromRevision: 'start',
      maxCount: 1,
    });
    if (!created || created.type !== AuthEvents.UserCreated) return null;
    const data = created.data as { user_id: string; account_id: string; email: string; password_hash: string };
    return { userId: data.user_id, accountId: data.account_id, email: data.email, passwordHash: data.password_hash };
  }
}
