import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { Db, Storage } from './db/index.ts';
import type { KeyRing } from './auth/keyring.ts';

/** What every capability gets from the app: settings, the database, the service's keys and a logger. */
export interface AppContext {
  config: Config;
  storage: Storage;
  db: Db;
  keys: KeyRing;
  /** HMAC key for signed download links. */
  urlKey: Buffer;
  log: Logger;
}
