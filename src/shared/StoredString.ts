import { Schema } from "effect"

/**
 * A string that PostgreSQL can store in a `text` column: anything but U+0000, which PostgreSQL refuses
 * ("invalid byte sequence for encoding UTF8: 0x00"). Every request string bound for the database starts from
 * this, so a NUL is a 400 naming the field, never a 500.
 */
export const StoredString = Schema.String.pipe(
  Schema.filter((value) => !value.includes("\u0000"), { message: () => "must not contain the NUL character (U+0000)" })
)
