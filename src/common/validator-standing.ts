/**
 * Subnet 13 counts a neuron as a validator only with a validator permit and at least this much
 * stake weight (α: alpha stake plus 0.18 × root TAO stake, the SDK's total stake; not TAO):
 * data-universe's `is_validator` with its `vpermit_rao_limit` default
 * (`common/utils.py`, `neurons/config.py`). Its miners refuse every other caller, its validator
 * evaluates every other neuron as a miner, and Gravity weighs only these validators' votes.
 */
export const DEFAULT_VALIDATOR_MIN_STAKE = 10_000;

/**
 * What the test needs of a neuron; stake null means unknown (docs/decisions.md, "Who is a
 * validator").
 */
export interface ValidatorStanding {
  validatorPermit: boolean;
  /** Stake weight on the subnet in alpha (not TAO). */
  stake: number | null;
}

/**
 * The one test of "validator" (VALIDATOR_MIN_STAKE). With its stake unknown, a permit decides:
 * the chain grants permits by stake, so it is the best evidence left.
 */
export function isValidator(neuron: ValidatorStanding, minStake: number): boolean {
  return neuron.validatorPermit && (neuron.stake === null || neuron.stake >= minStake);
}

/**
 * isValidator in SQL, over a `miners` row, with the minimum stake in `minStake` (a parameter
 * such as `$1`): one rule wherever Postgres decides it.
 */
export function isValidatorSql(minStake: string): string {
  return `(validator_permit AND (stake IS NULL OR stake >= ${minStake}))`;
}
