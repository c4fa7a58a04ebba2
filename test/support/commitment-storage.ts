import { Metadata, TypeRegistry } from '@polkadot/types';
import { decodeAddress, xxhashAsU8a } from '@polkadot/util-crypto';
import { hexToU8a, u8aConcat, u8aToHex } from '@polkadot/util';

/**
 * `Commitments.CommitmentOf` storage as a subtensor node holds it: keys
 * `twox128("Commitments") ++ twox128("CommitmentOf") ++ netuid (u16, Identity) ++
 * twox64(account) ++ account`, values SCALE-encoded `PalletCommitmentsRegistration`, built with
 * the recorded runtime's metadata (the registry the client decodes them with). Beside it, what
 * the pallet's space rule reads (`Commitments.UsedSpaceOf`, `SubtensorModule.Tempo`) and the
 * head's `System.Number`.
 */
export class CommitmentStorage {
  private readonly registry: TypeRegistry;
  /** Storage key (hex) → value (hex). */
  private readonly entries = new Map<string, string>();

  private readonly metadata: Metadata;

  constructor(metadataHex: string) {
    ({ registry: this.registry, metadata: this.metadata } = recordedRegistry(metadataHex));
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

  /** The account's space used in epoch `lastEpoch` (`UsedSpaceOf`); undefined for none. */
  setUsedSpace(netuid: number, hotkey: string, usage: Usage | undefined): void {
    const key = storageKey(netuid, hotkey, 'UsedSpaceOf');
    if (!usage) return void this.entries.delete(key);
    const value = this.registry.createType('PalletCommitmentsUsageTracker', usage);
    this.entries.set(key, value.toHex());
  }

  usedSpace(netuid: number, hotkey: string): Usage | undefined {
    const value = this.entries.get(storageKey(netuid, hotkey, 'UsedSpaceOf'));
    if (!value) return undefined;
    const { lastEpoch, usedSpace } = this.registry
      .createType('PalletCommitmentsUsageTracker', value)
      .toJSON() as { lastEpoch: number; usedSpace: number };
    return { lastEpoch: Number(lastEpoch), usedSpace: Number(usedSpace) };
  }

  setTempo(netuid: number, tempo: number): void {
    this.entries.set(tempoKey(netuid), u8aToHex(this.registry.createType('u16', tempo).toU8a()));
  }

  /** The subnet's tempo; by default the storage's (360 in the recorded metadata). */
  tempo(netuid: number): number {
    return this.numberAt(tempoKey(netuid), 'u16', 'SubtensorModule', 'Tempo');
  }

  setMaxSpace(space: number): void {
    this.entries.set(MAX_SPACE_KEY, u8aToHex(this.registry.createType('u32', space).toU8a()));
  }

  /** `Commitments.MaxSpace`; by default the storage's (3100 in the recorded metadata). */
  maxSpace(): number {
    return this.numberAt(MAX_SPACE_KEY, 'u32', 'Commitments', 'MaxSpace');
  }

  /** The number stored at `key`, or the metadata's default for `pallet`'s `item`. */
  private numberAt(key: string, type: 'u16' | 'u32', pallet: string, item: string): number {
    const value = this.entries.get(key);
    if (value) return this.registry.createType(type, hexToU8a(value)).toNumber();
    const entry = this.metadata.asLatest.pallets
      .find((candidate) => candidate.name.eq(pallet))!
      .storage.unwrap()
      .items.find((candidate) => candidate.name.eq(item))!;
    return this.registry.createType(type, entry.fallback.toU8a(true)).toNumber();
  }

  /** The head's number (`System.Number`), as the stand-in's blocks move on. */
  setBlockNumber(block: number): void {
    this.entries.set(SYSTEM_NUMBER_KEY, u8aToHex(this.registry.createType('u32', block).toU8a()));
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

/** `UsageTracker`: the space an account used (`usedSpace`) in the subnet's epoch `lastEpoch`. */
export interface Usage {
  lastEpoch: number;
  usedSpace: number;
}

const MAX_SPACE_KEY = u8aToHex(
  u8aConcat(xxhashAsU8a('Commitments', 128), xxhashAsU8a('MaxSpace', 128)),
);

const SYSTEM_NUMBER_KEY = u8aToHex(
  u8aConcat(xxhashAsU8a('System', 128), xxhashAsU8a('Number', 128)),
);

/** A `Commitments` double map's key: netuid (u16, Identity), then the account (Twox64Concat). */
function storageKey(netuid: number, hotkey: string, item = 'CommitmentOf'): string {
  const account = decodeAddress(hotkey);
  return u8aToHex(
    u8aConcat(
      xxhashAsU8a('Commitments', 128),
      xxhashAsU8a(item, 128),
      netuidBytes(netuid),
      xxhashAsU8a(account, 64),
      account,
    ),
  );
}

/** `SubtensorModule.Tempo(netuid)`: keyed by the netuid as it is (Identity). */
function tempoKey(netuid: number): string {
  return u8aToHex(
    u8aConcat(xxhashAsU8a('SubtensorModule', 128), xxhashAsU8a('Tempo', 128), netuidBytes(netuid)),
  );
}

function netuidBytes(netuid: number): Uint8Array {
  return new Uint8Array([netuid & 0xff, netuid >> 8]);
}

/**
 * A type registry of the recorded runtime, as the client builds it: its metadata, and
 * Subtensor's two transaction extensions, which carry no data (as SubtensorConnection declares
 * them).
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
