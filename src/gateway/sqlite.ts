/** @module Loads better-sqlite3 when a database is opened, so importing the gateway's modules never needs the native addon. */
import { createRequire } from "node:module";
import type BetterSqlite3 from "better-sqlite3";

export type SqliteDatabase = BetterSqlite3.Database;
export type SqliteStatement<Params extends unknown[] = unknown[], Row = unknown> = BetterSqlite3.Statement<
  Params,
  Row
>;

/**
 * better-sqlite3 is an optional dependency: the plugin also runs inside gateways (and Node versions) where the
 * native addon does not load, and only the reference gateway and `hooks state` keep a database.
 */
export const SQLITE_MISSING_MESSAGE =
  "the reference gateway keeps its state in SQLite and needs better-sqlite3, which could not be loaded: install it with `npm install better-sqlite3` (it builds a native addon for this Node version)";

/** Its message is the one line `hooks serve` and `hooks state` print; the loader's own error is its cause. */
export class SqliteUnavailableError extends Error {
  override readonly name = "SqliteUnavailableError";
}

/** The better-sqlite3 constructor, or a SqliteUnavailableError whose message says how to install it. */
export function loadSqlite(): typeof BetterSqlite3 {
  try {
    // createRequire inside a function: a static import would make every importer of this folder need the addon.
    const Database = createRequire(import.meta.url)("better-sqlite3") as typeof BetterSqlite3;
    // The package loads its addon only when a database is opened; an in-memory one cannot fail for other reasons.
    new Database(":memory:").close();
    return Database;
  } catch (error) {
    throw new SqliteUnavailableError(SQLITE_MISSING_MESSAGE, { cause: error });
  }
}
