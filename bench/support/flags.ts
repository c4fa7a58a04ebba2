import { relative } from 'node:path';
import { parseArgs, ParseArgsConfig } from 'node:util';

type FlagOptions = NonNullable<ParseArgsConfig['options']>;

/** Flags that make a benchmark serve one of its own children; not for people. */
const CHILD_FLAG = /^serve-/;

/**
 * A benchmark's command-line flags, parsed strictly. `--help` lists them and exits; an unknown
 * flag, or a flag without its value, is named beside that list and exits with code 2, instead of
 * Node's stack trace. What each flag means is in the benchmark's header comment.
 */
export function benchFlags<T extends { options: FlagOptions }>(
  config: T,
  argv: string[] = process.argv.slice(2),
): ReturnType<typeof parseArgs<T>> {
  if (argv.includes('--help')) {
    process.stdout.write(`${flagsUsage(config.options)}\n`);
    process.exit(0);
  }
  try {
    // `args` only says where the flags come from; the result's type depends on `options` alone.
    return parseArgs({ ...config, args: argv }) as ReturnType<typeof parseArgs<T>>;
  } catch (error) {
    if (!isParseArgsError(error)) throw error;
    process.stderr.write(`${error.message}\n${flagsUsage(config.options)}\n`);
    process.exit(2);
  }
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
