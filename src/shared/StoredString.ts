import { Schema } from "effect"

/** An unpaired UTF-16 surrogate: a high one not followed by a low one, or a low one not after a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** Whether `value` is well-formed UTF-16 (no unpaired surrogate), that is, has a UTF-8 encoding at all. */
export const isWellFormed = (value: string): boolean => !LONE_SURROGATE.test(value)

/** C0 controls, DEL and C1 controls: tab and line breaks included. */
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/

/**
 * A string that PostgreSQL can store in a `text` column as it was sent: anything but U+0000, which
 * PostgreSQL refuses ("invalid byte sequence for encoding UTF8: 0x00"), and an unpaired UTF-16 surrogate
 * (`"\ud800"` in JSON), which has no UTF-8 encoding and which the driver would silently store as U+FFFD. Every
 * request string bound for the database starts from this, so either is a 400 naming the field, never a 500
 * or an altered value.
 */
export const StoredString = Schema.String.pipe(
  Schema.filter((value) => !value.includes("\u0000"), { message: () => "must not contain the NUL character (U+0000)" }),
  Schema.filter(isWellFormed, {
    message: () => "must be valid Unicode text (it holds an unpaired UTF-16 surrogate)"
  })
)

/**
 * One line of text — a name, a city, a URL: no control characters (U+0000–U+001F, U+007F–U+009F: tabs and
 * line breaks included), which no one means in a name and which would break the one-line formats these
 * values travel in (SIRE files, logs, e-mail headers). A refinement, so a schema can check it after its own
 * rules (a blank name is told it is blank).
 */
export const singleLine = <I, R>(self: Schema.Schema<string, I, R>) =>
  self.pipe(
    Schema.filter((value: string) => !CONTROL.test(value), {
      message: () => "must not contain control characters (U+0000–U+001F, U+007F–U+009F)"
    })
  )

/** A {@link StoredString} on one line. */
export const SingleLineString = singleLine(StoredString)
