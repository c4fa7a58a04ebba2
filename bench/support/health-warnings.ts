import { Round } from './measure';
import { Target, TARGETS } from './health-targets';
import { formatInt, formatPercent } from './report';

// bench:health's warnings: rounds that make its ratios doubtful.

/**
 * Each path is the bare route plus work: faster than it in a round only when the floor's run was
 * disturbed, which makes that round's ratios against it wrong. Looked at round by round: a
 * disturbed round need not move a median.
 */
export function outranWarnings(rounds: Record<Target, Round[]>): string[] {
  const floor = rounds['bare Nest'];
  return (['least path', 'lean path', 'lean in guards'] as const).flatMap((path) =>
    rounds[path].flatMap((round, i) =>
      round.rps > floor[i].rps
        ? [
            `warning:  the ${path} outran bare Nest in round ${i + 1} (${formatInt(round.rps)} vs ` +
              `${formatInt(floor[i].rps)} req/s): that round's floor was disturbed; run again`,
          ]
        : [],
    ),
  );
}

/** How far a target may move beyond bare node's move and still be read as the machine's. */
const MACHINE_MOVE_MARGIN = 0.1;

/**
 * Medians hide a trend. A rate that keeps falling round after round means either that a
 * per-request cost grows during the run (then the result depends on how long the benchmark ran)
 * or that the machine slowed; one that keeps rising, that the warm-up was too short or that the
 * machine freed up. Bare node's work per request cannot change, and the rounds alternate the
 * targets, so bare node's move over the same rounds is the machine's: a target that moved no
 * further the same way is not blamed for it. Three rounds cannot tell a growing cost from a burst
 * that hit one target's rounds only, so a move beyond bare node's asks for another run too.
 */
export function driftWarnings(rounds: Record<Target, Round[]>): string[] {
  const machine = change(rounds['bare node']);
  return TARGETS.flatMap((target) => {
    const moved = steadyMove(rounds[target]);
    if (moved === undefined) return [];
    const fell = moved > 0;
    const head =
      `warning:  ${target} req/s ${fell ? 'fell' : 'rose'} ${formatPercent(Math.abs(moved))} ` +
      `from round 1 to ${rounds[target].length}`;
    if (target === 'bare node') {
      return [
        `${head}: its work per request cannot change, so the machine ${fell ? 'slowed' : 'freed up'}; run again`,
      ];
    }
    // The machine's move the same way, or none.
    const machineSameWay = fell ? Math.max(machine, 0) : Math.max(-machine, 0);
    if (Math.abs(moved) <= machineSameWay + MACHINE_MOVE_MARGIN) {
      return [
        `${head}, as bare node's did (${formatPercent(Math.abs(machine))}): the machine ${fell ? 'slowed' : 'freed up'}; run again`,
      ];
    }
    const why = fell
      ? 'a per-request cost may grow during the run, or only its rounds were disturbed'
      : 'its warm-up may be too short, or only its first rounds were disturbed';
    return [`${head}, ${machineMove(machine)}: ${why}; run again`];
  });
}

/** Bare node's move over the rounds, in words. */
function machineMove(machine: number): string {
  if (formatPercent(Math.abs(machine)) === '0%') return "bare node's held steady";
  return `bare node's ${machine < 0 ? 'rose' : 'fell'} ${formatPercent(Math.abs(machine))}`;
}

/**
 * The share lost from the first round to the last (negative: gained), when each round moved the
 * same way as the one before and 15 % or more was lost or gained; otherwise undefined.
 */
function steadyMove(rounds: Round[]): number | undefined {
  const falling = rounds.every((round, i) => i === 0 || round.rps < rounds[i - 1].rps);
  const rising = rounds.every((round, i) => i === 0 || round.rps > rounds[i - 1].rps);
  const moved = change(rounds);
  return rounds.length >= 2 && (falling || rising) && Math.abs(moved) >= 0.15 ? moved : undefined;
}

/** The share lost from the first round to the last (negative when the last was faster). */
function change(rounds: Round[]): number {
  const first = rounds[0]?.rps ?? 0;
  const last = rounds[rounds.length - 1]?.rps ?? 0;
  return first > 0 ? 1 - last / first : 0;
}
