import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** PEM files in a directory: a CA of the test's own and a server certificate it signed. */
export interface TestCertificates {
  /** The CA's certificate: what a client given it as `sslrootcert` trusts. */
  ca: string;
  /** The server's certificate (for `hostName` only) and its key, unencrypted. */
  cert: string;
  key: string;
}

/**
 * Makes a CA and a server certificate for `hostName` (its only subject alternative name), valid
 * for a day, with the `openssl` command line (EC P-256 keys: made in milliseconds). Made at test
 * time, so that no key is ever committed. Fails naming `openssl` where it is not installed.
 */
export function makeTestCertificates(directory: string, hostName: string): TestCertificates {
  const file = (name: string) => join(directory, name);
  const openssl = (...args: string[]) => {
    try {
      execFileSync('openssl', args, { cwd: directory, stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (error) {
      const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
      throw new Error(
        `openssl ${args[0]} failed (the tests make their TLS certificates with the openssl ` +
          `command line): ${stderr || (error as Error).message}`,
      );
    }
  };
  const newKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(
    'req',
    '-x509',
    ...newKey,
    '-subj',
    '/CN=gateway test CA',
    '-days',
    '1',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
  );
  openssl(
    'req',
    '-new',
    ...newKey,
    '-subj',
    `/CN=${hostName}`,
    '-keyout',
    'server.key',
    '-out',
    'server.csr',
  );
  writeFileSync(
    file('server.ext'),
    `subjectAltName=DNS:${hostName}\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n`,
  );
  openssl(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-set_serial',
    '1',
    '-days',
    '1',
    '-extfile',
    'server.ext',
    '-out',
    'server.crt',
  );
  return { ca: file('ca.crt'), cert: file('server.crt'), key: file('server.key') };
}
