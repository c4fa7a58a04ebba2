/**
 * Key classes with their own hourly budget. The master key is an admin with the validator budget.
 */
export const API_KEY_TIERS = ['regular', 'validator'] as const;
export type ApiKeyTier = (typeof API_KEY_TIERS)[number];
