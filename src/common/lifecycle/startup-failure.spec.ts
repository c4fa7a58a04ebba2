import { runInNewContext } from 'node:vm';
import { databaseFailure, listenFailure, StartupError, withoutPassword } from './startup-failure';

const codeError = (message: string, code: string) => Object.assign(new Error(message), { code });

describe(databaseFailure.name, () => {
  const setting = `DATABASE_URL=${withoutPassword('postgres://gateway:s3cret@db:5432/gateway')}`;

  it('names the setting, without its password, for the errors of an unusable database', () => {
    const failure = databaseFailure(
      codeError('password authentication failed for user "gateway"', '28P01'),
      setting,
    );
    expect(failure).toBeInstanceOf(StartupError);
    expect((failure as Error).message).toBe(
      'Startup failed: cannot use the database of DATABASE_URL=postgres://gateway:***@db:5432/gateway: password authentication failed for user "gateway"',
    );
    expect(
      (
        databaseFailure(
          new Error('Connection terminated due to connection timeout'),
          setting,
        ) as Error
      ).message,
    ).toMatch(/connection timeout$/);
    const refused = new AggregateError([
      codeError('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED'),
    ]);
    expect((databaseFailure(refused, setting) as Error).message).toMatch(/ECONNREFUSED ::1:5432$/);
  });

  // Each of these is the operator's to fix (a wrong DATABASE_URL, a database not created yet, a
  // full server): named by its setting, not a stack that hides the cause.
  it('names the setting for every error of a database that cannot be reached or used', () => {
    const codes = ['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT'];
    codes.push('EHOSTUNREACH', 'ENETUNREACH', '3D000', '28000', '28P01', '42501', '53300', '57P03');
    for (const code of codes) {
      const failure = databaseFailure(codeError(`failed with ${code}`, code), setting);
      expect(failure).toBeInstanceOf(StartupError);
      expect((failure as Error).message).toMatch(
        new RegExp(`^Startup failed: .*failed with ${code}$`),
      );
    }
  });

  // ALLOW_CONNECTIONS false (a restore or move in progress): a FATAL at connect, 55000, which
  // printed a stack. The same 55000 requests answer 503 (isDatabaseUnavailable); a query's own
  // 55000 is a bug, not a setting.
  it('names the setting for a database that does not accept connections now, not for other 55000s', () => {
    const closed = codeError('database "gateway" is not currently accepting connections', '55000');
    const failure = databaseFailure(closed, setting);
    expect(failure).toBeInstanceOf(StartupError);
    expect((failure as Error).message).toBe(
      'Startup failed: cannot use the database of DATABASE_URL=postgres://gateway:***@db:5432/gateway: database "gateway" is not currently accepting connections',
    );
    const own = codeError(
      'currval of sequence "jobs_id_seq" is not yet defined in this session',
      '55000',
    );
    expect(databaseFailure(own, setting)).toBe(own);
  });

  // pg gives a connection timeout no code: known by its message alone.
  it('names the setting for a connection timeout', () => {
    const failure = databaseFailure(
      new Error('Connection terminated due to connection timeout'),
      setting,
    );
    expect(failure).toBeInstanceOf(StartupError);
  });

  it('gives the code as the cause of an error without a message', () => {
    const failure = databaseFailure(
      Object.assign(new AggregateError([], ''), { code: 'ECONNREFUSED' }),
      setting,
    );
    expect((failure as Error).message).toMatch(/: ECONNREFUSED$/);
  });

  // sslmode=require against a server without TLS, or a server certificate Node does not trust
  // (a managed Postgres's CA, a self-signed one: pg takes require as verify-full): each printed
  // "Startup failed: Error: …" and a stack through pg's socket code, naming no setting.
  it('names the setting for a TLS connection the URL asks for and the server cannot give', () => {
    const failures = [
      new Error('The server does not support SSL connections'),
      codeError('self-signed certificate', 'DEPTH_ZERO_SELF_SIGNED_CERT'),
      codeError('self-signed certificate in certificate chain', 'SELF_SIGNED_CERT_IN_CHAIN'),
      codeError('unable to verify the first certificate', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'),
      codeError('certificate has expired', 'CERT_HAS_EXPIRED'),
      codeError(
        "Hostname/IP does not match certificate's altnames",
        'ERR_TLS_CERT_ALTNAME_INVALID',
      ),
      codeError('wrong version number', 'ERR_SSL_WRONG_VERSION_NUMBER'),
    ];
    for (const error of failures) {
      const failure = databaseFailure(error, setting);
      expect(failure).toBeInstanceOf(StartupError);
      expect((failure as Error).message).toBe(
        `Startup failed: cannot use the database of DATABASE_URL=postgres://gateway:***@db:5432/gateway: ${error.message} (TLS: see the URL's sslmode and sslrootcert)`,
      );
    }
  });

  // Node's own errors reach jest's sandbox from outside it (database-tls.medium-spec.ts), where
  // `instanceof Error` is false: the line gave the bare code instead of the message.
  it('gives the message of an error from another realm', () => {
    const error: unknown = runInNewContext(
      "Object.assign(new Error('unable to verify the first certificate'), { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' })",
    );
    expect(error instanceof Error).toBe(false);
    expect((databaseFailure(error, setting) as Error).message).toBe(
      "Startup failed: cannot use the database of DATABASE_URL=postgres://gateway:***@db:5432/gateway: unable to verify the first certificate (TLS: see the URL's sslmode and sslrootcert)",
    );
  });

  // Node's other certificate checks: a server certificate for another use (INVALID_PURPOSE, as
  // Node gives for one whose extendedKeyUsage is clientAuth alone), a CA file that holds no CA.
  it("names the setting for each of Node's certificate verification codes", () => {
    for (const code of [
      'INVALID_PURPOSE',
      'INVALID_CA',
      'PATH_LENGTH_EXCEEDED',
      'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
      'CRL_SIGNATURE_FAILURE',
      'HOSTNAME_MISMATCH',
      'CERT_REVOKED',
    ]) {
      const failure = databaseFailure(codeError('unsuitable certificate purpose', code), setting);
      expect([code, (failure as Error).message]).toEqual([
        code,
        expect.stringMatching(
          /: unsuitable certificate purpose \(TLS: see the URL's sslmode and sslrootcert\)$/,
        ),
      ]);
    }
  });

  // pg reads the URL's certificate files as it makes its first connection: a wrong path printed
  // "Startup failed: Error: ENOENT: no such file or directory, open '…'" and a stack through
  // pg-connection-string, naming no setting.
  it("names the setting for a certificate file of the URL's that cannot be read", () => {
    const url = 'postgres://gateway:s3cret@db/gateway?sslmode=verify-full&sslrootcert=/etc/ca.pem';
    const missing = Object.assign(
      codeError("ENOENT: no such file or directory, open '/etc/ca.pem'", 'ENOENT'),
      { syscall: 'open', path: '/etc/ca.pem' },
    );
    const failure = databaseFailure(missing, `DATABASE_URL=${withoutPassword(url)}`, url);
    expect(failure).toBeInstanceOf(StartupError);
    expect((failure as Error).message).toBe(
      'Startup failed: cannot use the database of DATABASE_URL=postgres://gateway:***@db/gateway: its sslrootcert /etc/ca.pem cannot be read (ENOENT)',
    );
    // Another file's failure is not the URL's.
    const other = Object.assign(codeError('ENOENT: open', 'ENOENT'), {
      syscall: 'open',
      path: '/etc/other.pem',
    });
    expect(databaseFailure(other, setting, url)).toBe(other);
  });

  it("names the client certificate and key files of the URL's too, and leaves a URL it cannot parse", () => {
    const url = 'postgres://gateway@db/gateway?sslcert=/etc/client.pem&sslkey=/etc/client.key';
    const unreadable = (path: string, code: string) =>
      Object.assign(codeError(`${code}: open '${path}'`, code), { syscall: 'open', path });
    for (const [path, named] of [
      ['/etc/client.pem', 'sslcert /etc/client.pem'],
      ['/etc/client.key', 'sslkey /etc/client.key'],
    ]) {
      const failure = databaseFailure(unreadable(path, 'EACCES'), setting, url);
      expect(failure).toBeInstanceOf(StartupError);
      expect((failure as Error).message).toMatch(
        new RegExp(`: its ${named} cannot be read \\(EACCES\\)$`),
      );
    }
    const error = unreadable('/etc/client.pem', 'ENOENT');
    expect(databaseFailure(error, setting, 'not a URL')).toBe(error);
  });

  it('leaves any other error as it is, stack and all', () => {
    const other = codeError('relation "x" does not exist', '42P01');
    expect(databaseFailure(other, setting)).toBe(other);
  });
});

describe(listenFailure.name, () => {
  it('names PORT and HOST for a port it cannot listen on, and leaves other errors', () => {
    expect(
      (listenFailure(codeError('listen EACCES', 'EACCES'), '0.0.0.0', 80) as Error).message,
    ).toBe(
      'Startup failed: cannot listen on PORT=80 HOST=0.0.0.0: not allowed to listen on this port (ports below 1024 need privileges) (EACCES)',
    );
    expect(
      (listenFailure(codeError('listen EADDRINUSE', 'EADDRINUSE'), '127.0.0.1', 8080) as Error)
        .message,
    ).toBe(
      'Startup failed: cannot listen on PORT=8080 HOST=127.0.0.1: the port is already in use (another process listens on it) (EADDRINUSE)',
    );
    const other = new Error('boom');
    expect(listenFailure(other, '0.0.0.0', 80)).toBe(other);
  });
});

describe(withoutPassword.name, () => {
  it('hides the password and the query, and says so of a value that is not a URL', () => {
    expect(withoutPassword('postgres://u@h/d')).toBe('postgres://u@h/d');
    expect(withoutPassword('postgresql://u:p%40ss@h:1/d?sslmode=require')).toBe(
      'postgresql://u:***@h:1/d',
    );
    expect(withoutPassword('postgres://u:p@[bad')).toBe('(not a URL)');
  });

  // pg reads a password from the query too: it was printed as it was.
  it('never shows a password given in the query', () => {
    expect(withoutPassword('postgres://u@127.0.0.1/db?password=s3cret&sslpassword=k3y')).toBe(
      'postgres://u@127.0.0.1/db',
    );
  });
});
