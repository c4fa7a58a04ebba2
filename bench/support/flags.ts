import { relative } from 'node:path';
import { parseArgs, ParseArgsConfig } from 'node:util';

type FlagOptions = NonNullable<ParseArgsConfig['options']>;

/** Flags that make a benchmark serve one of its own children; not for people. */
const CHILD_FLAG = /^serve-/;

/**
 * A benchmark's command-line flags, parsed strictly. `--help` (or `-h`) lists them and exits; an
 * unknown flag, or a flag without its value, is named beside that list and exits with code 2,
 * instead of Node's stack trace. What each flag means is in the benchmark's header comment.
 */
export function benchFlags<T extends { options: FlagOptions }>(
  config: T,
  argv: string[] = process.argv.slice(2),
): ReturnType<typeof parseArgs<T>> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${flagsUsage(config.options)}\n`);
    process.exit(0);
  }
  try {
    // `args` only says where the flags come from; the result's type depends on `options` alone.
    return parseArgs({ ...config, args: argv }) as ReturnType<typeof parseArgs<T>>;
  } catch (error) {
    if (!isParseArgsError(error)) throw error;
    return refuseUsage(`${error.message}\n${flagsUsage(config.options)}`);
  }
}

/**
 * Refuses what the benchmark was asked to run (a flag or BENCH_* value) before anything starts:
 * the message on stderr and exit status 2, the shell's "usage error", rather than a stack trace
 * and 1, which a script retrying failed runs could not tell from a failed benchmark.
 */
export function refuseUsage(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}

/** `usage: node dist-dev/bench/health.js [--seconds <value>] [--profile]`, child flags left out. */
export function flagsUsage(options: FlagOptions, script = process.argv[1] ?? 'bench'): string {
  const flags = Object.entries(options)
    .filter(([name]) => !CHILD_FLAG.test(name))
    .map(([name, option]) => (option.type === 'string' ? `[--${name} <value>]` : `[--${name}]`));
  return `usage: node ${relative(process.cwd(), script)} ${flags.join(' ')}`.trimEnd();
}

function isParseArgsError(error: unknown): error is Error {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_');
}
