// What a caught value says: its message, its errno code. A throw can be of anything; these read
// it without a cast. (Not by `instanceof Error`: an error made by Node's own modules is not an
// instance of the Error of a jest test's sandbox.)

/** The message of an Error (anything with a string `message`), or the thrown value itself as text. */
export function errorMessage(err: unknown): string {
  return typeof err === 'object' && err !== null && 'message' in err && typeof err.message === 'string' ? err.message : String(err);
}

/** The errno code of a Node system error (ENOENT, EACCES, ...) or of SQLite's (SQLITE_BUSY), or undefined. */
export function errorCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}
