/**
 * Reads each entry of a list setting with `read`, and refuses the list with every entry's
 * problem at once, `;`-separated: naming the first alone left the next for another start (a
 * configuration audit found CORS_ORIGINS, TRUST_PROXY and MINER_CALL_BUDGETS doing so).
 */
export function readEveryEntry<E, T>(
  entries: readonly E[],
  read: (entry: E, index: number) => T,
): T[] {
  const values: T[] = [];
  const problems: string[] = [];
  entries.forEach((entry, index) => {
    try {
      values.push(read(entry, index));
    } catch (error) {
      problems.push((error as Error).message);
    }
  });
  if (problems.length > 0) throw new Error(problems.join('; '));
  return values;
}
