/**
 * Whether a command's arguments ask for its usage: `--help` or `-h` alone. Beside other
 * arguments it is refused (an Error saying so) rather than read as an unknown option or
 * ignored: the one rule of every command the service ships (the gateway, the migrations, the
 * erasure), each answering with its usage and exit statuses before it connects to anything.
 */
export function helpAsked(args: readonly string[]): boolean {
  const help = args.filter((arg) => arg === '--help' || arg === '-h');
  if (help.length === 0) return false;
  if (args.length > 1) throw new Error(`${help[0]} takes no other arguments`);
  return true;
}
