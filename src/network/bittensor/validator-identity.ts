import { DynamicModule, Global, Module } from '@nestjs/common';
import { Sr25519Keypair } from './keypair';

/**
 * Who this gateway is on the network: the validator's hotkey, which signs every call to miners
 * and under which votes are kept. Loaded before the app is built (validator-key.ts); injected
 * wherever the hotkey's address or signature is needed.
 */
export class ValidatorIdentity {
  constructor(readonly keypair: Sr25519Keypair) {}

  /** The hotkey's ss58 address. */
  get hotkey(): string {
    return this.keypair.address;
  }
}

@Global()
@Module({})
export class ValidatorIdentityModule {
  static forRoot(keypair: Sr25519Keypair): DynamicModule {
    return {
      module: ValidatorIdentityModule,
      providers: [{ provide: ValidatorIdentity, useValue: new ValidatorIdentity(keypair) }],
      exports: [ValidatorIdentity],
    };
  }
}
