import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstClosedDirectory } from './directory-access';

// Directories made by this process are its own (uid, gid): the users asked about are this one
// (the owner), a member of its group, and a stranger, none of whom the test has to be.
describe(firstClosedDirectory.name, () => {
  const self = { uid: process.getuid!(), gid: process.getgid!() };
  const owner = { uid: self.uid, gids: [self.gid + 1] };
  const member = { uid: self.uid + 1, gids: [self.gid + 1, self.gid] };
  const stranger = { uid: self.uid + 1, gids: [self.gid + 1] };
  let scratch: string;
  let closed: string;
  let cluster: string;

  beforeEach(() => {
    // The temporary directory is 700 itself: opened here, so the one below is the question.
    scratch = mkdtempSync(join(tmpdir(), 'gateway-directory-access-'));
    chmodSync(scratch, 0o755);
    closed = join(scratch, 'home');
    cluster = join(closed, 'checkout', '.data', 'postgres');
    mkdirSync(cluster, { recursive: true });
    chmodSync(join(closed, 'checkout'), 0o755);
    chmodSync(join(closed, 'checkout', '.data'), 0o755);
  });
  afterEach(() => rmSync(scratch, { recursive: true, force: true }));

  it('names a directory of mode 700 above the path to any user but its owner', () => {
    chmodSync(closed, 0o700);
    expect(firstClosedDirectory(cluster, stranger)).toBe(closed);
    expect(firstClosedDirectory(cluster, member)).toBe(closed);
    expect(firstClosedDirectory(cluster, owner)).toBeUndefined();
  });

  it('reads the group bits for a member, by its primary or other groups, and the others bits for the rest', () => {
    chmodSync(closed, 0o710);
    expect(firstClosedDirectory(cluster, member)).toBeUndefined();
    expect(firstClosedDirectory(cluster, stranger)).toBe(closed);
    chmodSync(closed, 0o701);
    expect(firstClosedDirectory(cluster, stranger)).toBeUndefined();
    // The kernel reads one class only: a member is refused what others are allowed.
    expect(firstClosedDirectory(cluster, member)).toBe(closed);
  });

  it('reads the owner bits alone for the owner', () => {
    chmodSync(closed, 0o611);
    expect(firstClosedDirectory(cluster, owner)).toBe(closed);
  });

  it('asks search permission only: a directory of mode 711 lets everyone through, the path itself is not asked', () => {
    chmodSync(closed, 0o711);
    chmodSync(cluster, 0o700);
    expect(firstClosedDirectory(cluster, stranger)).toBeUndefined();
  });

  it('names the highest closed directory first', () => {
    chmodSync(closed, 0o700);
    chmodSync(join(closed, 'checkout'), 0o700);
    expect(firstClosedDirectory(cluster, stranger)).toBe(closed);
  });
});
