/**
 * What a file system call's failure is called in a one-line message: its code (`ENOSPC`,
 * `ENOTDIR`), or its message when it has none.
 */
export function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : String((error as Error | null)?.message ?? error);
}
