/**
 * An `OpenApi.Transform` for our `HttpApi`s: decode failures never leave as `HttpApiDecodeError` (the error
 * middleware rewrites them to `invalid_request`), so the documents list only our 400s.
 */
export const withoutDecodeErrors = (spec: Record<string, any>): Record<string, any> => {
  const text = JSON.stringify(spec)
    .replaceAll("{\"$ref\":\"#/components/schemas/HttpApiDecodeError\"},", "")
    .replaceAll(",{\"$ref\":\"#/components/schemas/HttpApiDecodeError\"}", "")
  const cleaned = JSON.parse(text)
  for (const name of ["HttpApiDecodeError", "Issue", "PropertyKey"]) delete cleaned.components?.schemas?.[name]
  return cleaned
}
