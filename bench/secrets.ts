/**
 * Plants the master key, a live issued key and the metrics token in every place a client
 * controls (path segments, query names and values, headers, JSON bodies, malformed bodies;
 * raw, percent-, double-percent- and base64-encoded), sends the requests to the compiled
 * service running as a production process (LOG_LEVEL=debug), then scans everything the process
 * wrote (stdout, stderr) and every response body for each secret in each encoding, and for the
 * secrets' SHA-256. Hits must be 0.
 * Run: npm run bench:secrets [-- --runs 10000 --seed 42] (or BENCH_SECRETS_RUNS, BENCH_SECRETS_SEED).
 */
import { randomBytes } from 'node:crypto';
import { benchFlags } from './support/flags';
import { benchAppEnv } from './support/app-server';
import { cleanupOnExit } from './support/cleanup';
import { acquireDatabase } from './support/database';
import { findLeaks, forbiddenForms } from './support/fuzz/secret-forms';
import { runSecretsCampaign } from './support/fuzz/secrets';
import { integerSetting, seedSetting, settingText } from './support/measure';
import { commandLine, formatInt, machineLine, progress, table } from './support/report';
import { startServiceProcess } from './support/service-process';

const { values: flags } = benchFlags({
  options: { runs: { type: 'string' }, seed: { type: 'string' } },
});
const runs = integerSetting('runs', flags.runs, 'BENCH_SECRETS_RUNS', 10_000);
const seed = seedSetting(settingText('seed', flags.seed, 'BENCH_SECRETS_SEED'));

async function main(): Promise<void> {
  const cleanup = cleanupOnExit();
  try {
    const database = await acquireDatabase('bench_secrets');
    cleanup.push(database.release);
    const { env, masterKey } = benchAppEnv(database.url);
    const metricsToken = `metrics-${randomBytes(16).toString('hex')}`;
    // The compiled service as deployed, not a child of this script's own code: what it writes
    // is exactly what a deployment would write.
    const service = await startServiceProcess({
      ...env,
      METRICS_TOKEN: metricsToken,
      LOG_LEVEL: 'debug',
      // The campaign's requests come from one client, a quarter of them with a wrong key or
      // none: the failed-authentication lockout would turn most of the rest into 429s.
      AUTH_FAILURE_LIMIT: '100000000',
    });
    cleanup.push(async () => void (await service.stop()));
    const { url, lines } = service;
    const created = await fetch(`${url}/api/v1/keys`, {
      method: 'POST',
      headers: { 'X-API-Key': masterKey, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'planted', tier: 'validator' }),
    });
    const issued = ((await created.json()) as { key: string }).key;
    const secrets = { master: masterKey, issued, metricsToken };

    progress(`planting secrets: ${runs} requests, seed ${seed}`);
    const started = performance.now();
    const result = await runSecretsCampaign(url, secrets, { numRuns: runs, seed });
    const seconds = (performance.now() - started) / 1000;
    const code = await service.stop();
    const output = lines.join('\n');
    const leaks = findLeaks(secrets, [
      { where: 'the process output', text: output },
      ...result.bodies,
    ]);
    const bodyBytes = result.bodies.reduce((sum, body) => sum + body.text.length, 0);

    const byCount = (map: Map<string | number, number>) =>
      [...map].sort(([a], [b]) => String(a).localeCompare(String(b)));
    process.stdout.write(
      [
        '',
        'Secrets: planted in every client-controlled place of requests to a production process',
        `command:  ${commandLine()}`,
        `machine:  ${machineLine()}`,
        `database: ${database.description}`,
        `seed:     ${seed} (repeat with --seed ${seed} --runs ${runs})`,
        '',
        table([
          ['position', 'requests'],
          ...byCount(result.byPosition).map(([k, n]) => [String(k), formatInt(n)]),
        ]),
        '',
        `requests: ${formatInt(result.requests)} in ${seconds.toFixed(1)} s; secrets planted: ${formatInt(result.planted)}`,
        `statuses: ${byCount(result.statuses)
          .map(([status, n]) => `${status}×${n}`)
          .join(' ')}`,
        `scanned:  ${formatInt(lines.length)} output lines (${formatInt(output.length)} characters), ` +
          `${formatInt(result.bodies.length)} response bodies (${formatInt(bodyBytes)} characters); ` +
          `3 secrets × ${forbiddenForms(masterKey).size} forms (raw, percent ×4, double, partial, ` +
          'base64 and base64url whole and at 3 alignments, sha256)',
        `hits:     ${leaks.length} (0 expected)`,
        `off the document: ${result.offDocument.length} answers (0 expected; the fuzz oracle's checks)`,
        `service:  exited ${code} after SIGTERM`,
        ...result.offDocument
          .slice(0, 10)
          .map(({ where, problems }) => `off:      ${where}: ${problems.join('; ')}`),
        ...leaks
          .slice(0, 10)
          .map(
            (leak) =>
              `hit:      ${leak.secret} as ${leak.form} in ${leak.where}: …${leak.excerpt}…`,
          ),
        '',
      ].join('\n'),
    );
    process.exitCode = leaks.length === 0 && result.offDocument.length === 0 && code === 0 ? 0 : 1;
  } finally {
    await cleanup.run();
  }
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`bench:secrets failed: ${message}\n`);
  process.exit(1);
});
