/**
 * TypeORM's Postgres driver answers an UPDATE or DELETE (with or without RETURNING) with
 * `[rows, rowCount]` rather than the rows themselves (a SELECT or INSERT gives the rows).
 * returningRows and affectedCount read that pair, so no caller unpacks it by hand.
 */
function isRowsAndCount(result: unknown): result is [unknown[], number] {
  return (
    Array.isArray(result) &&
    result.length === 2 &&
    Array.isArray(result[0]) &&
    typeof result[1] === 'number'
  );
}

/** The rows an UPDATE or DELETE ... RETURNING returned; a SELECT's or INSERT's as they are. */
export function returningRows<T>(result: unknown): T[] {
  return isRowsAndCount(result) ? (result[0] as T[]) : (result as T[]);
}

/**
 * How many rows an UPDATE or DELETE changed. Any other statement's answer carries no count, so
 * this throws rather than guess one (a `WITH … UPDATE … SELECT` is a SELECT).
 */
export function affectedCount(result: unknown): number {
  if (!isRowsAndCount(result)) throw new Error('affectedCount needs an UPDATE or DELETE result');
  return result[1];
}
