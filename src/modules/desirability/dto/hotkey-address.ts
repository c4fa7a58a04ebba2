import { ValidateBy, ValidationOptions } from 'class-validator';
import { publicKeyOfAddress } from '../../../network/bittensor/keypair';

/** What a `hotkey` that names no key is told: the form a hotkey takes, with one. */
export const HOTKEY_ADDRESS_REFUSAL =
  'must be a hotkey’s SS58 address (base58, its checksum intact), e.g. ' +
  '5F4tQyWrhfGVcNhoqeiNsR6KjD4wMZ2kfhLj4oHYuyHbZAc3';

/**
 * A hotkey's address, under any SS58 prefix (publicKeyOfAddress decodes it and checks its
 * checksum). Text that is no address (a typo, a checksum broken by one character, blanks) was
 * looked up as it was and answered 404 "No desirabilities submitted by hotkey …", which told a
 * client the validator had not voted when it was the client's hotkey that was wrong (an API
 * audit). Reported as pydantic reports a validator's ValueError.
 */
export const HotkeyAddress = (options?: ValidationOptions) =>
  ValidateBy(
    {
      name: 'hotkeyAddress',
      validator: {
        validate: (value: unknown) => typeof value === 'string' && !!publicKeyOfAddress(value),
        defaultMessage: () => HOTKEY_ADDRESS_REFUSAL,
      },
    },
    options,
  );
