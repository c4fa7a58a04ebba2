import { Metadata, TypeRegistry } from '@polkadot/types';
import type { Extrinsic } from '@polkadot/types/interfaces';
import { bnToU8a, compactToU8a, hexToU8a, u8aConcat, u8aToHex, u8aToString } from '@polkadot/util';
import {
  blake2AsU8a,
  decodeAddress,
  encodeAddress,
  sr25519Verify,
  xxhashAsU8a,
} from '@polkadot/util-crypto';
import { epochIndex } from '../../src/network/chain/commitment-window';
import { CommitmentStorage, recordedRegistry } from './commitment-storage';

/**
 * The part of the chain stand-in (chain-replay.ts) that takes signed extrinsics: it decodes
 * them with the recorded runtime's metadata, checks their signature as the chain does, records
 * them, and includes each in a block of its own right away, with the block's events (the
 * extrinsic's success, or the failure it was told to answer with). `author_submitAndWatchExtrinsic`
 * answers ready → inBlock → finalized; `author_submitExtrinsic` answers the hash.
 *
 * `set_commitment` follows the recorded runtime's space rule (pallets/commitments/src/lib.rs):
 * each commitment uses the length of its fields, at least 100, of the account's `maxSpace` per
 * subnet epoch (`tempo + 1` blocks, offset by `netuid + 1`); past it the extrinsic fails with
 * `SpaceLimitExceeded`, and a successful one is counted in `UsedSpaceOf`.
 */
export interface SubmittedExtrinsic {
  /** ss58 of the signer. */
  signer: string;
  /** `commitments.setCommitment`, … */
  call: string;
  /** The call's arguments as the chain decodes them (toJSON). */
  args: Record<string, unknown>;
  /** The sr25519 signature checks out against the payload the chain would rebuild. */
  signatureValid: boolean;
  nonce: number;
  blockNumber: number;
  blockHash: string;
  /** `success`, or the Commitments error name the block's events carry. */
  outcome: string;
}

export interface ChainExtrinsics {
  readonly submitted: SubmittedExtrinsic[];
  /**
   * Answers the next `count` extrinsics with a Commitments dispatch error in their block
   * (System.ExtrinsicFailed): by default the rate-limit error this runtime has.
   */
  failNext(count: number, error?: string): void;
  /**
   * Submissions get no answer and are not included while set (a node that takes the call and
   * then goes quiet): the submitter is left waiting, as across a crash or a restart.
   */
  holdSubmissions: boolean;
  /**
   * Submissions are included (their commitment stored) but the submitter hears nothing after
   * `ready` while set: the process stops between the chain taking the commitment and its record.
   */
  silentInclusions: boolean;
  /**
   * `MaxSpace`: the space an account may use per epoch (the storage's default, 3100, is 31 SHA
   * commitments; 100 allows one).
   */
  maxSpace: number;
  /**
   * The head's number: the block the last extrinsic was included in, or where advanceTo left it.
   */
  readonly head: number;
  /** Moves the head on to `block` (blocks without extrinsics), as time passing would. */
  advanceTo(block: number): void;
}

export interface ChainBasics {
  metadataV14: string;
  genesisHash: string;
  /** The recorded head: its hash and header (JSON, as the node sends it). */
  head: string;
  header: { number: string; [field: string]: unknown };
  runtimeVersion: { specVersion: number; transactionVersion: number };
}

interface RpcRequest {
  id: number | string;
  method: string;
  params?: unknown[];
}

type Send = (message: unknown) => void;

/** `set_commitment`'s arguments as the call decodes them (toJSON): `{ raw40: '0x…' }` fields. */
interface CommitmentArgs {
  netuid: number;
  info: { fields: Record<string, string>[] };
}

const SYSTEM_EVENTS_KEY = u8aToHex(
  u8aConcat(xxhashAsU8a('System', 128), xxhashAsU8a('Events', 128)),
);

export class ExtrinsicsStandIn implements ChainExtrinsics {
  readonly submitted: SubmittedExtrinsic[] = [];
  holdSubmissions = false;
  silentInclusions = false;
  private readonly registry: TypeRegistry;
  private readonly metadata: Metadata;
  private readonly blocks = new Map<
    string,
    { header: unknown; extrinsics: string[]; events: string }
  >();
  private readonly nonces = new Map<string, number>();
  private failures: { left: number; error: string } = { left: 0, error: '' };
  private blockNumber: number;
  private parentHash: string;
  private subscriptions = 0;

  constructor(
    readonly chain: ChainBasics,
    /** CommitmentOf storage: a successful set_commitment lands there, as on the chain. */
    private readonly storage: CommitmentStorage,
  ) {
    ({ registry: this.registry, metadata: this.metadata } = recordedRegistry(chain.metadataV14));
    this.blockNumber = Number(chain.header.number);
    this.parentHash = chain.head;
    this.storage.setBlockNumber(this.blockNumber);
  }

  /** Kept in the storage, where the pallet and the service's reader find it. */
  get maxSpace(): number {
    return this.storage.maxSpace();
  }

  set maxSpace(space: number) {
    this.storage.setMaxSpace(space);
  }

  get head(): number {
    return this.blockNumber;
  }

  advanceTo(block: number): void {
    if (block < this.blockNumber) throw new Error(`the head is at ${this.blockNumber} already`);
    this.blockNumber = block;
    this.storage.setBlockNumber(block);
  }

  failNext(count: number, error?: string): void {
    const names = this.commitmentErrors();
    const chosen =
      error ?? ['CommitmentSetRateLimitExceeded', 'SpaceLimitExceeded'].find((n) => names.has(n));
    if (!chosen || !names.has(chosen))
      throw new Error(
        `the recorded runtime has no Commitments error ${error}: ${[...names.keys()].join(', ')}`,
      );
    this.failures = { left: count, error: chosen };
  }

  /** Answers the request if it is one of ours; false lets the replay answer it. */
  handle(request: RpcRequest, send: Send): boolean {
    const params = request.params ?? [];
    const reply = (result: unknown) => send({ jsonrpc: '2.0', id: request.id, result });
    switch (request.method) {
      case 'system_accountNextIndex':
        reply(this.nonces.get(String(params[0])) ?? 0);
        return true;
      case 'state_call': {
        if (params[0] !== 'AccountNonceApi_account_nonce') return false;
        const account = encodeAddress(hexToU8a(String(params[1])), 42);
        reply(u8aToHex(bnToU8a(this.nonces.get(account) ?? 0, { bitLength: 32 })));
        return true;
      }
      case 'author_submitExtrinsic':
      case 'author_submitAndWatchExtrinsic':
        if (!this.holdSubmissions) return this.submit(request, send);
        return true;
      case 'author_unwatchExtrinsic':
        reply(true);
        return true;
      case 'chain_getBlock': {
        const block = this.blocks.get(String(params[0]));
        if (!block) return false;
        reply({
          block: { header: block.header, extrinsics: block.extrinsics },
          justifications: null,
        });
        return true;
      }
      case 'chain_getHeader': {
        const block = this.blocks.get(String(params[0]));
        if (!block) return false;
        reply(block.header);
        return true;
      }
      case 'state_getStorage':
      case 'state_getStorageAt': {
        const block = this.blocks.get(String(params[1]));
        if (String(params[0]) !== SYSTEM_EVENTS_KEY || !block) return false;
        reply(block.events);
        return true;
      }
      default:
        return false;
    }
  }

  private submit(request: RpcRequest, send: Send): boolean {
    const included = this.include(String(request.params?.[0]));
    if ('error' in included) {
      send({ jsonrpc: '2.0', id: request.id, error: included.error });
      return true;
    }
    if (request.method === 'author_submitExtrinsic') {
      send({ jsonrpc: '2.0', id: request.id, result: included.txHash });
      return true;
    }
    const subscription = `ext${++this.subscriptions}`;
    send({ jsonrpc: '2.0', id: request.id, result: subscription });
    const updates = this.silentInclusions
      ? ['ready']
      : ['ready', { inBlock: included.blockHash }, { finalized: included.blockHash }];
    for (const result of updates)
      send({ jsonrpc: '2.0', method: 'author_extrinsicUpdate', params: { subscription, result } });
    return true;
  }

  private include(hex: string): { txHash: string; blockHash: string } | { error: unknown } {
    let extrinsic: Extrinsic;
    try {
      extrinsic = this.registry.createType('Extrinsic', hex);
    } catch (error) {
      return { error: { code: 1002, message: `Verification Error: ${(error as Error).message}` } };
    }
    if (!extrinsic.isSigned)
      return { error: { code: 1010, message: 'Invalid Transaction: unsigned' } };
    const signer = extrinsic.signer.toString();
    const nonce = extrinsic.nonce.toNumber();
    const expected = this.nonces.get(signer) ?? 0;
    if (nonce !== expected)
      return {
        error: { code: 1010, message: `Invalid Transaction: nonce ${nonce}, expected ${expected}` },
      };
    const signatureValid = this.verify(extrinsic, signer);
    if (!signatureValid)
      return { error: { code: 1010, message: 'Invalid Transaction: bad signature' } };
    this.nonces.set(signer, nonce + 1);

    const call = `${extrinsic.method.section}.${extrinsic.method.method}`;
    const args = (extrinsic.method.toJSON() as { args: Record<string, unknown> }).args;
    let failure = this.failures.left > 0 ? this.failures.error : undefined;
    if (failure) this.failures.left -= 1;

    this.blockNumber += 1;
    this.storage.setBlockNumber(this.blockNumber);
    if (!failure && call === 'commitments.setCommitment')
      failure = this.useSpace(signer, args as unknown as CommitmentArgs);
    const header = {
      ...this.chain.header,
      parentHash: this.parentHash,
      number: `0x${this.blockNumber.toString(16)}`,
    };
    const blockHash = this.registry.createType('Header', header).hash.toHex();
    this.parentHash = blockHash;
    this.blocks.set(blockHash, { header, extrinsics: [hex], events: this.events(failure) });
    if (!failure && call === 'commitments.setCommitment') {
      const { netuid, info } = args as unknown as CommitmentArgs;
      const raw = info.fields[0]?.raw40 ?? info.fields[0]?.Raw40;
      // Stored where CommitmentOf is read from: what we commit reads back as the chain has it.
      if (raw)
        this.storage.setCommitment(netuid, signer, u8aToString(hexToU8a(raw)), this.blockNumber);
    }
    this.submitted.push({
      signer,
      call,
      args,
      signatureValid,
      nonce,
      blockNumber: this.blockNumber,
      blockHash,
      outcome: failure ?? 'success',
    });
    return { txHash: extrinsic.hash.toHex(), blockHash };
  }

  /**
   * The pallet's space rule: the commitment's space (its fields' lengths, at least 100) counted
   * in the signer's epoch, or `SpaceLimitExceeded` when it would pass `maxSpace` (nothing counted).
   */
  private useSpace(signer: string, { netuid, info }: CommitmentArgs): string | undefined {
    const required = Math.max(
      100,
      info.fields.reduce((sum, field) => {
        const [bytes] = Object.values(field);
        return sum + (typeof bytes === 'string' ? hexToU8a(bytes).length : 0);
      }, 0),
    );
    const epoch = epochIndex(this.blockNumber, this.storage.tempo(netuid), netuid);
    const usage = this.storage.usedSpace(netuid, signer);
    const used = usage?.lastEpoch === epoch ? usage.usedSpace : 0;
    if (used + required > this.maxSpace) return 'SpaceLimitExceeded';
    this.storage.setUsedSpace(netuid, signer, { lastEpoch: epoch, usedSpace: used + required });
    return undefined;
  }

  /** The chain's check: the signer's sr25519 signature of the payload (hashed past 256 bytes). */
  private verify(extrinsic: Extrinsic, signer: string): boolean {
    const headerHash = this.registry.createType('Header', this.chain.header).hash.toHex();
    return [headerHash, this.chain.head].some((blockHash) => {
      try {
        return this.verifyAt(extrinsic, signer, blockHash);
      } catch {
        return false;
      }
    });
  }

  private verifyAt(extrinsic: Extrinsic, signer: string, blockHash: string): boolean {
    {
      const payload = this.registry.createType(
        'ExtrinsicPayload',
        {
          method: extrinsic.method.toHex(),
          era: extrinsic.era.toHex(),
          nonce: extrinsic.nonce.toHex(),
          tip: extrinsic.tip.toHex(),
          mode: extrinsic.mode?.toHex(),
          metadataHash: null,
          specVersion: this.chain.runtimeVersion.specVersion,
          transactionVersion: this.chain.runtimeVersion.transactionVersion,
          genesisHash: this.chain.genesisHash,
          blockHash: extrinsic.era.isImmortalEra ? this.chain.genesisHash : blockHash,
        },
        // The extrinsic's version byte carries the signed bit (0x80) beside the version.
        { version: extrinsic.version & 0x7f },
      );
      const bytes = payload.toU8a({ method: true });
      const message = bytes.length > 256 ? blake2AsU8a(bytes) : bytes;
      return sr25519Verify(message, extrinsic.signature.toU8a(), decodeAddress(signer));
    }
  }

  /** The block's System.Events: the extrinsic (index 0) succeeded, or failed with `failure`. */
  private events(failure: string | undefined): string {
    const system = this.pallet('System');
    const eventsType = this.registry.lookup.getSiType(system.events.unwrap().type);
    const variant = (name: string) =>
      eventsType.def.asVariant.variants.find((candidate) => candidate.name.eq(name))!;
    const info = this.encodeField(variant('ExtrinsicSuccess').fields[0].type.toNumber(), {
      weight: { refTime: 1_000_000, proofSize: 1000 },
      class: 'Normal',
      paysFee: 'Yes',
    });
    let event: Uint8Array;
    if (failure) {
      const failed = variant('ExtrinsicFailed');
      const commitments = this.pallet('Commitments');
      const error = this.encodeField(failed.fields[0].type.toNumber(), {
        Module: {
          index: commitments.index.toNumber(),
          error: u8aToHex(u8aConcat([this.commitmentErrors().get(failure)!], new Uint8Array(3))),
        },
      });
      event = u8aConcat([system.index.toNumber(), failed.index.toNumber()], error, info);
    } else {
      event = u8aConcat(
        [system.index.toNumber(), variant('ExtrinsicSuccess').index.toNumber()],
        info,
      );
    }
    // EventRecord: phase ApplyExtrinsic(0), the event, no topics; in a vector of one.
    const record = u8aConcat([0], bnToU8a(0, { bitLength: 32 }), event, compactToU8a(0));
    return u8aToHex(u8aConcat(compactToU8a(1), record));
  }

  private encodeField(typeId: number, value: unknown): Uint8Array {
    return this.registry.createType(this.registry.createLookupType(typeId), value).toU8a();
  }

  private pallet(name: string) {
    return this.metadata.asLatest.pallets.find((pallet) => pallet.name.eq(name))!;
  }

  private commitmentErrors(): Map<string, number> {
    const errors = this.registry.lookup.getSiType(this.pallet('Commitments').errors.unwrap().type);
    return new Map(
      errors.def.asVariant.variants.map((variant) => [
        variant.name.toString(),
        variant.index.toNumber(),
      ]),
    );
  }
}
