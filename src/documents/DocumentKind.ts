/** The document formats a guest may provide (design §5, §6.5): JPEG, PNG or PDF, recognised by content. */
export type DocumentContentType = "image/jpeg" | "image/png" | "application/pdf"

/** Photos and scans are limited to 10 MB each (design §5). */
export const MAX_DOCUMENT_BYTES = 10 * 1024 * 1024

const signatures: ReadonlyArray<readonly [DocumentContentType, ReadonlyArray<number>]> = [
  ["image/jpeg", [0xff, 0xd8, 0xff]],
  ["image/png", [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]],
  ["application/pdf", [0x25, 0x50, 0x44, 0x46, 0x2d]] // "%PDF-"
]

/**
 * The format of `bytes` by its magic number, never by a file name or a `Content-Type` header (both are the
 * sender's claim); `undefined` when it is none of the accepted formats.
 */
export const sniffDocument = (bytes: Uint8Array): DocumentContentType | undefined =>
  signatures.find(([, magic]) => magic.every((byte, i) => bytes[i] === byte))?.[0]
