// What a caught value says: its message, its errno code. A throw can be of anything; these read
// it without a cast.

/** The message of an Error, or the thrown value itself as text. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The errno code of a Node system error (ENOENT, EACCES, ...), or undefined. */
export function errorCode(err: unknown): string | undefined {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}
