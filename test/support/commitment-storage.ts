import { Metadata, TypeRegistry } from '@polkadot/types';
import { decodeAddress } from '@polkadot/util-crypto';
import { u8aConcat, u8aToHex } from '@polkadot/util';
import { xxhashAsU8a } from '@polkadot/util-crypto';

/**
 * `Commitments.CommitmentOf` storage as a subtensor node holds it: keys
 * `twox128("Commitments") ++ twox128("CommitmentOf") ++ netuid (u16, Identity) ++
 * twox64(account) ++ account`, values SCALE-encoded `PalletCommitmentsRegistration`, built with
 * the recorded runtime's metadata (the registry the client decodes them with).
 */
export class CommitmentStorage {
  private readonly registry: TypeRegistry;
  /** Storage key (hex) → value (hex). */
  private readonly entries = new Map<string, string>();

  constructor(metadataHex: string) {
    this.registry = recordedRegistry(metadataHex).registry;
  }

  /** The text as one `Raw<length>` item: a 40-character SHA is a `Raw40`. */
  setCommitment(netuid: number, hotkey: string, text: string, block: number): void {
    const bytes = Buffer.from(text, 'latin1');
    this.setFields(netuid, hotkey, [{ [`Raw${bytes.length}`]: u8aToHex(bytes) }], block);
  }

  setFields(netuid: number, hotkey: string, fields: unknown[], block: number): void {
    const value = this.registry.createType('PalletCommitmentsRegistration', {
      deposit: 0,
      block,
      info: { fields },
    });
    this.entries.set(storageKey(netuid, hotkey), value.toHex());
  }

  clear(netuid: number, hotkey: string): void {
    this.entries.delete(storageKey(netuid, hotkey));
  }

  value(key: string): string | null {
    return this.entries.get(key.toLowerCase()) ?? null;
  }

  /** Keys under `prefix` after `startKey`, in order, at most `count` (state_getKeysPaged). */
  keys(prefix: string, count: number, startKey: string | null): string[] {
    const lower = prefix.toLowerCase();
    const after = startKey?.toLowerCase() ?? '';
    return [...this.entries.keys()]
      .filter((key) => key.startsWith(lower) && key > after)
      .sort()
      .slice(0, Number.isFinite(count) ? count : undefined);
  }
}

function storageKey(netuid: number, hotkey: string): string {
  const account = decodeAddress(hotkey);
  const netuidBytes = new Uint8Array([netuid & 0xff, netuid >> 8]);
  return u8aToHex(
    u8aConcat(
      xxhashAsU8a('Commitments', 128),
      xxhashAsU8a('CommitmentOf', 128),
      netuidBytes,
      xxhashAsU8a(account, 64),
      account,
    ),
  );
}

/**
 * A type registry of the recorded runtime, as the client builds it: its metadata, and
 * Subtensor's two transaction extensions, which carry no data (as SubtensorConnection declares them).
 */
export function recordedRegistry(metadataHex: string): {
  registry: TypeRegistry;
  metadata: Metadata;
} {
  const registry = new TypeRegistry();
  const metadata = new Metadata(registry, metadataHex as `0x${string}`);
  registry.setMetadata(metadata, undefined, {
    SubtensorTransactionExtension: { extrinsic: {}, payload: {} },
    DrandPriority: { extrinsic: {}, payload: {} },
  });
  return { registry, metadata };
}
