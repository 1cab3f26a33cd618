/**
 * The chunks of a body read piece by piece, as one array of `size` bytes (the caller counted them while reading).
 * A lone chunk is answered as it is, without a copy.
 */
export const concatBytes = (chunks: ReadonlyArray<Uint8Array>, size: number): Uint8Array => {
  if (chunks.length === 1 && chunks[0]!.byteLength === size) return chunks[0]!
  const out = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    out.set(chunk, offset)
    offset += chunk.byteLength
  }
  return out
}
