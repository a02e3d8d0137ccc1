import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { Db, Storage } from './db/index.ts';
import type { KeyRing } from './auth/keyring.ts';
import type { Renderer } from './render/renderer.ts';

/** What every capability gets from the app: settings, the database, the service's keys, the renderer and a logger. */
export interface AppContext {
  config: Config;
  storage: Storage;
  db: Db;
  keys: KeyRing;
  /** HMAC key for signed download links. */
  urlKey: Buffer;
  /** HMAC key for the stored fingerprints of idempotent requests (src/http/idempotency.ts). */
  requestKey: Buffer;
  /** Draws documents on its own threads and keeps them (src/render/renderer.ts). */
  renderer: Renderer;
  log: Logger;
}
