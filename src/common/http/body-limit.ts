/**
 * BODY_LIMIT's form: a whole number of bytes, kilobytes or megabytes (load-config checks its
 * floor).
 */
export const BODY_LIMIT_FORM = /^(\d+)(b|kb|mb)$/i;

const BYTE_UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 * 1024 };

/** A limit of BODY_LIMIT's form (`100kb`, `1mb`), in bytes. */
export function bytesOf(limit: string): number {
  const parts = BODY_LIMIT_FORM.exec(limit);
  if (!parts) throw new Error(`A body limit looks like 100kb or 1mb, not ${limit}`);
  return Number(parts[1]) * BYTE_UNITS[parts[2].toLowerCase()];
}
