// Users of an account: the people who sign in on the OAuth consent page.
import { findAccount } from '../auth/credentials.ts';
import type { Db } from '../db/index.ts';
import { isUniqueViolation } from '../db/index.ts';
import { isoNow, uuidv7 } from '../db/ids.ts';
import { Conflict, InvalidInput, NotFound } from '../errors.ts';
import { DUMMY_SECRET_HASH, hashSecret, verifySecret } from '../auth/secrets.ts';

export interface User {
  id: string;
  accountId: string;
  email: string;
}

export const MIN_PASSWORD_LENGTH = 10;
const MAX_PASSWORD_LENGTH = 1024;

/** The form emails are stored and compared in: trimmed, lower-case. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

function checkEmail(email: string): void {
  if (email.length > 254 || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) throw new InvalidInput(`${email} is not an email address`);
}

export async function createUser(db: Db, accountId: string, email: string, password: string): Promise<User> {
  const normalized = normalizeEmail(email);
  checkEmail(normalized);
  if ([...password].length < MIN_PASSWORD_LENGTH) throw new InvalidInput(`the password must have at least ${MIN_PASSWORD_LENGTH} characters`);
  if (password.length > MAX_PASSWORD_LENGTH) throw new InvalidInput(`the password must have at most ${MAX_PASSWORD_LENGTH} characters`);
  const user = { id: uuidv7(), accountId, email: normalized };
  try {
    await db
      .insertInto('users')
      .values({ id: user.id, account_id: accountId, email: normalized, password_hash: await hashSecret(password), created_at: isoNow() })
      .execute();
  } catch (err) {
    if (isUniqueViolation(err)) throw new Conflict(`a user with email ${normalized} already exists`);
    throw err;
  }
  return user;
}

export async function findUser(db: Db, id: string): Promise<(User & { accountName: string; disabled: boolean }) | null> {
  const row = await db.selectFrom('users').select(['id', 'account_id', 'email', 'disabled_at']).where('id', '=', id).executeTakeFirst();
  if (!row) return null;
  const account = await findAccount(db, row.account_id);
  return { id: row.id, accountId: row.account_id, email: row.email, accountName: account.name, disabled: row.disabled_at !== null };
}

/** The user when email and password match, else null; an unknown email costs the same scrypt work. */
export async function authenticateUser(db: Db, email: string, password: string): Promise<User | null> {
  const row = await db.selectFrom('users').select(['id', 'account_id', 'email', 'password_hash', 'disabled_at']).where('email', '=', normalizeEmail(email)).executeTakeFirst();
  // A disabled user costs the same scrypt work, so the answer's timing does not tell.
  const ok = await verifySecret(password, row?.password_hash ?? DUMMY_SECRET_HASH);
  return row && ok && row.disabled_at === null ? { id: row.id, accountId: row.account_id, email: row.email } : null;
}

/** Disables the user with this email (idempotent); returns the user's id. */
export async function disableUser(db: Db, email: string): Promise<string> {
  const row = await db.selectFrom('users').select('id').where('email', '=', normalizeEmail(email)).executeTakeFirst();
  if (!row) throw new NotFound('user', email);
  await db.updateTable('users').set({ disabled_at: isoNow() }).where('id', '=', row.id).where('disabled_at', 'is', null).execute();
  return row.id;
}
