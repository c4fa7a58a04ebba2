/**
 * TypeORM's Postgres driver answers an UPDATE or DELETE ... RETURNING with `[rows, rowCount]`
 * rather than the rows themselves (a SELECT or INSERT gives the rows); this unwraps both.
 */
export function returningRows<T>(result: unknown): T[] {
  if (
    Array.isArray(result) &&
    result.length === 2 &&
    Array.isArray(result[0]) &&
    typeof result[1] === 'number'
  ) {
    return result[0] as T[];
  }
  return result as T[];
}
