/** `1 miner`, `3 miners`: a count with its noun, for messages people read. */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
