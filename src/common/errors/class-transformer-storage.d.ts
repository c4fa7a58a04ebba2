// class-transformer's metadata storage (its `@Type` decorators' record) is not in its package's
// types at the path Node loads it from; the declaration it ships is under types/.
declare module 'class-transformer/cjs/storage' {
  import type { MetadataStorage } from 'class-transformer/types/MetadataStorage';

  export const defaultMetadataStorage: MetadataStorage;
}
