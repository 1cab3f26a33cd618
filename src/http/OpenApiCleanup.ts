import { Predicate, Schema } from "effect"

/** A document as JSON text decodes: an object of any JSON values. */
const Document = Schema.parseJson(Schema.Record({ key: Schema.String, value: Schema.Unknown }))

/**
 * An `OpenApi.Transform` for our `HttpApi`s: decode failures never leave as `HttpApiDecodeError` (the error
 * middleware rewrites them to `invalid_request`), so the documents list only our 400s.
 */
export const withoutDecodeErrors = (spec: Readonly<Record<string, unknown>>): Record<string, unknown> => {
  const text = JSON.stringify(spec)
    .replaceAll("{\"$ref\":\"#/components/schemas/HttpApiDecodeError\"},", "")
    .replaceAll(",{\"$ref\":\"#/components/schemas/HttpApiDecodeError\"}", "")
  const cleaned = Schema.decodeSync(Document)(text)
  const components = cleaned["components"]
  const schemas = Predicate.isRecord(components) ? components["schemas"] : undefined
  if (Predicate.isRecord(schemas)) {
    for (const name of ["HttpApiDecodeError", "Issue", "PropertyKey"]) delete schemas[name]
  }
  return cleaned
}
