import { JSONParser, TokenType } from '@streamparser/json';
import { UnreadableJsonError } from './miner-json';

/**
 * The most bytes of an answer read without an entity of `data_entities` ending: one record (an
 * X post, a Reddit post of 40,000 characters) is well under, escaped twice (its JSON travels as
 * a string inside JSON). Past it, the answer is refused: what a parser holds of an entity
 * before handing it over grows with the bytes it read (`{}` is 3 bytes and about 64 of heap).
 */
export const MAX_BYTES_PER_ENTITY = 1024 * 1024;
/** The parser is fed at most this much at a time, so that the bound above is kept per piece. */
const PIECE_BYTES = 64 * 1024;
/**
 * The deepest an answer may nest: an honest one nests 4 deep (the answer, `data_entities`, an
 * entity, `data_entity_bucket_id`'s parts), its records being strings. Each level is a frame on
 * the parser's stack.
 */
export const MAX_DEPTH = 16;

/**
 * Reads the entities of a GetDataEntityBucket answer (`data_entities`) as the answer arrives,
 * handing each to `onEntity` and keeping none: for an answer too large to hold whole (a spot
 * check of a bucket claimed larger than MINER_MAX_RESPONSE_BYTES carries). The byte cap on the
 * whole answer is the caller's (the chunks it passes). Throws UnreadableJsonError for a text
 * that is not JSON, nests deeper than MAX_DEPTH or goes MAX_BYTES_PER_ENTITY without an entity
 * ending. An answer without `data_entities` has no entities, as does one whose `data_entities`
 * is no list.
 */
export async function readEntitiesAsTheyArrive(
  chunks: AsyncIterable<Uint8Array>,
  onEntity: (entity: unknown) => void,
): Promise<void> {
  const parser = new JSONParser({ paths: ['$.data_entities.*'], keepStack: false });
  let failure: Error | undefined;
  let sinceLastEntity = 0;
  let depth = 0;
  parser.onToken = ({ token }) => {
    if (token === TokenType.LEFT_BRACE || token === TokenType.LEFT_BRACKET) depth += 1;
    else if (token === TokenType.RIGHT_BRACE || token === TokenType.RIGHT_BRACKET) depth -= 1;
    // Thrown into the tokenizer, which hands it to onError.
    if (depth > MAX_DEPTH) throw new UnreadableJsonError(`nests deeper than ${MAX_DEPTH}`);
  };
  parser.onError = (error) => (failure ??= error);
  parser.onValue = ({ value, parent }) => {
    sinceLastEntity = 0;
    if (Array.isArray(parent)) onEntity(value);
  };
  for await (const chunk of chunks) {
    // In pieces: a chunk of many entities is not one entity's bytes.
    for (let at = 0; at < chunk.byteLength; at += PIECE_BYTES) {
      const piece = chunk.subarray(at, at + PIECE_BYTES);
      sinceLastEntity += piece.byteLength;
      if (sinceLastEntity > MAX_BYTES_PER_ENTITY)
        throw new UnreadableJsonError(
          `goes ${MAX_BYTES_PER_ENTITY} bytes without an entity ending`,
        );
      parser.write(piece);
      if (failure instanceof UnreadableJsonError) throw failure;
      if (failure) throw new UnreadableJsonError('is not JSON');
    }
  }
  // A complete document ends the parser by itself; one that stopped short does not.
  if (!parser.isEnded) throw new UnreadableJsonError('is not JSON (it ends before its end)');
}
