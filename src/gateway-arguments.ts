import { helpAsked } from './common/lifecycle/help-asked';

/**
 * The gateway's command line: none but `--help`. It is configured by its environment, and an
 * argument it ignored started it all the same: `--help` migrated the database, generated a
 * master key and listened, and `--port 4000` listened on the default port (a CLI audit).
 */
export const GATEWAY_USAGE = [
  'usage: npm start (development: the devnet and an embedded Postgres) | npm run start:prod',
  '(built: node dist/src/main.js)',
  'The gateway takes no arguments: it is configured by environment variables, and .env beside',
  'it (.env.example and the README\'s "Configuration" list them). Exit status: 0 stopped by a',
  'signal, drained; 1 start-up failed (one line naming the setting); 2 arguments refused;',
  '128 + the signal when one ended a start (143 SIGTERM).',
];

/** `help` for `--help` or `-h` alone (helpAsked), `run` for none; an Error for anything else. */
export function gatewayRequest(args: readonly string[]): 'help' | 'run' {
  if (helpAsked(args)) return 'help';
  if (args.length === 0) return 'run';
  throw new Error(
    `takes no arguments (${args.map((arg) => JSON.stringify(arg)).join(' ')}): set its ` +
      'environment instead (--help)',
  );
}
