/** The wait before attempt `attempts + 1`: `first` doubled per failure, at most `max`. */
export function retryDelay(attempts: number, first: number, max: number): number {
  return Math.min(max, first * 2 ** Math.min(attempts, 30));
}
