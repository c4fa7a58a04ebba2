/**
 * The Gravity repository could not be reached or read: what its readers (the network's votes)
 * answer a retry-later for. Public, beside GravityGit (docs/decisions.md, "The network's
 * public surface").
 */
export class GravityUnavailableError extends Error {
  override readonly name = 'GravityUnavailableError';
}
