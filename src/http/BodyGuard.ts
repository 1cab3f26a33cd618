import {
  FileSystem,
  HttpIncomingMessage,
  HttpServerError,
  HttpServerRequest,
  Multipart,
  Path,
  UrlParams
} from "@effect/platform"
import { Effect, Either, Inspectable, Predicate, type Scope, Stream } from "effect"
import * as MP from "multipasta"
import { concatBytes } from "../shared/Bytes.ts"

/**
 * How every entrance's request body is read (design §6.2): the byte limit enforced while reading, chunked or
 * not; strict UTF-8; JSON no deeper than {@link MAX_JSON_DEPTH} and without a key twice in one object. The
 * body is read once, here, and the route is handed a request that answers the text already read. Pure
 * reading and checking: what a refusal looks like on the wire is `ErrorMiddleware`'s business.
 */

/** Deeper JSON is refused before it is parsed: recursive parsers and formatters would overflow the stack. */
export const MAX_JSON_DEPTH = 64

/** Why a body was not handed on. */
export type Refusal =
  | { readonly _tag: "TooLarge" }
  | { readonly _tag: "NotUtf8" }
  | { readonly _tag: "TooDeep" }
  | { readonly _tag: "DuplicateKey"; readonly key: string }
  /** The body could not be read at all (the client went away, a broken chunked encoding). */
  | { readonly _tag: "Unreadable"; readonly cause: unknown }

// ---------------------------------------------------------------------------------------------------------
// Content types

/** `Application/JSON; charset=UTF-8` → `application/json`; absent → "". */
export const mediaTypeOf = (header: string | undefined): string =>
  header === undefined ? "" : header.split(";", 1)[0]!.trim().toLowerCase()

/** `application/json`, with no parameter but an optional `charset=utf-8` (JSON is UTF-8, RFC 8259 §8.1). */
export const isJson = (header: string | undefined): boolean => {
  if (header === undefined) return false
  const [type, ...parameters] = header.split(";")
  if (type!.trim().toLowerCase() !== "application/json") return false
  return parameters.every((parameter) => {
    const [name, value] = parameter.split("=", 2).map((part) => part.trim().toLowerCase())
    return name === "" || (name === "charset" && (value === "utf-8" || value === "\"utf-8\""))
  })
}

export const isMultipart = (header: string | undefined): boolean => mediaTypeOf(header) === "multipart/form-data"

// ---------------------------------------------------------------------------------------------------------
// JSON shape: depth and duplicate keys, without recursion

export type ScanIssue = { readonly _tag: "TooDeep" } | { readonly _tag: "DuplicateKey"; readonly key: string }

const QUOTE = 0x22
const BACKSLASH = 0x5c

/**
 * Walks JSON text once, with an explicit stack (no recursion, so no depth can overflow it), and reports
 * nesting deeper than `maxDepth` or a key that appears twice in one object (`"a"` and `"\u0061"` are the
 * same key). Everything else about the syntax is left to `JSON.parse`, which runs next: on malformed text
 * the scan may stop early or see nonsense, but it never throws, and it always counts the brackets that
 * `JSON.parse` would reach first, so the parser never sees nesting deeper than `maxDepth`.
 */
export const scanJson = (text: string, maxDepth: number = MAX_JSON_DEPTH): ScanIssue | undefined => {
  // One entry per open container: the keys seen so far for an object, null for an array.
  const stack: Array<Set<string> | null> = []
  let expectingKey = false
  const length = text.length
  let i = 0
  while (i < length) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      let end = i + 1
      for (;;) {
        end = text.indexOf("\"", end)
        if (end === -1) return undefined // unterminated string: JSON.parse says so
        let backslashes = 0
        while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++
        if (backslashes % 2 === 0) break
        end++
      }
      if (expectingKey) {
        const keys = stack[stack.length - 1]
        if (keys !== null && keys !== undefined) {
          let key = text.slice(i + 1, end)
          if (key.includes("\\")) {
            try {
              // A quoted JSON string parses to a string.
              key = String(JSON.parse(text.slice(i, end + 1)))
            } catch {
              return undefined // a bad escape: JSON.parse says so
            }
          }
          if (keys.has(key)) return { _tag: "DuplicateKey", key }
          keys.add(key)
        }
        expectingKey = false
      }
      i = end + 1
      continue
    }
    switch (c) {
      case 0x7b: // {
        if (stack.length >= maxDepth) return { _tag: "TooDeep" }
        stack.push(new Set())
        expectingKey = true
        break
      case 0x5b: // [
        if (stack.length >= maxDepth) return { _tag: "TooDeep" }
        stack.push(null)
        expectingKey = false
        break
      case 0x7d: // }
      case 0x5d: // ]
        stack.pop()
        expectingKey = false
        break
      case 0x2c: // ,
        expectingKey = stack.length > 0 && stack[stack.length - 1] !== null
        break
      case 0x3a: // :
        expectingKey = false
        break
    }
    i++
  }
  return undefined
}

// ---------------------------------------------------------------------------------------------------------
// Reading

const utf8 = new TextDecoder("utf-8", { fatal: true })


/**
 * The whole body, at most `limit` bytes. With a `Content-Length` (already checked against the limit, and
 * which HTTP framing holds the body to) it is one native read; without one (chunked), chunks are counted as
 * they arrive and reading stops at the first byte past the limit: the rest is never read.
 */
const readBytes = (
  request: HttpServerRequest.HttpServerRequest,
  limit: number
): Effect.Effect<Uint8Array, Refusal> => {
  const unreadable = (cause: unknown): Refusal => ({ _tag: "Unreadable", cause })
  if (request.headers["content-length"] !== undefined && request.headers["transfer-encoding"] === undefined) {
    return Effect.mapBoth(request.arrayBuffer, { onFailure: unreadable, onSuccess: (buffer) => new Uint8Array(buffer) })
  }
  const state: { size: number; chunks: Array<Uint8Array> } = { size: 0, chunks: [] }
  return Stream.runFoldWhile(request.stream, state, (read) => read.size <= limit, (read, chunk) => {
    read.chunks.push(chunk)
    read.size += chunk.length
    return read
  }).pipe(
    Effect.mapError(unreadable),
    Effect.flatMap((read) =>
      read.size > limit ? Effect.fail<Refusal>({ _tag: "TooLarge" }) : Effect.succeed(concatBytes(read.chunks, read.size))
    )
  )
}

/**
 * Reads and checks a JSON route's body: at most `limit` bytes, strict UTF-8, no nesting deeper than
 * {@link MAX_JSON_DEPTH}, no key twice in one object. Answers the request to hand on, which gives the route
 * the text already read (a syntax error is still the route's `JSON.parse` to find, once).
 */
export const readJson = (
  request: HttpServerRequest.HttpServerRequest,
  limit: number
): Effect.Effect<HttpServerRequest.HttpServerRequest, Refusal> =>
  Effect.flatMap(readBytes(request, limit), (bytes) => {
    let text: string
    try {
      text = utf8.decode(bytes)
    } catch {
      return Effect.fail<Refusal>({ _tag: "NotUtf8" })
    }
    const issue = scanJson(text)
    return issue === undefined
      ? Effect.succeed(new GuardedRequest(request, { bytes, text }))
      : Effect.fail<Refusal>(issue)
  })

/** Parts of the photo upload (`front`, `back`) and its fields: a bound on temporary files per request. */
const MAX_MULTIPART_PARTS = 16
const MAX_MULTIPART_FIELD_BYTES = 64 * 1024

/**
 * Reads the multipart route's body, at most `limit` bytes (chunked or not), and hands on a request whose
 * `multipart` parses those bytes with the platform's parser (multipasta). The whole body is parsed before a
 * part is handed on, so a body that ends or breaks inside a file is one `MultipartError` (400), never half a
 * file: platform-bun's streaming reader leaves a rejected promise unhandled then (which ends the Bun process)
 * and the platform's generic one never finishes.
 */
export const readMultipart = (
  request: HttpServerRequest.HttpServerRequest,
  limit: number
): Effect.Effect<HttpServerRequest.HttpServerRequest, Refusal> =>
  Effect.map(readBytes(request, limit), (bytes) => new GuardedRequest(request, { bytes, text: undefined }))

/** A multipasta failure as the platform's reasons: a reached limit by its limit, anything else a parse error. */
export const multipartError = (cause: MP.MultipartError): Multipart.MultipartError => {
  if (cause._tag !== "ReachedLimit") return new Multipart.MultipartError({ reason: "Parse", cause })
  const reason = ({
    MaxParts: "TooManyParts",
    MaxFieldSize: "FieldTooLarge",
    MaxPartSize: "FileTooLarge",
    MaxTotalSize: "BodyTooLarge"
  } as const)[cause.limit]
  return new Multipart.MultipartError({ reason, cause })
}

/**
 * The platform's own multipart parser (a route the guard does not know, e.g. a path whose parameter holds a `/`)
 * wraps multipasta's failure as `InternalError`: the reason it stands for, so that it is a 400/413, not a 500.
 */
const MULTIPASTA_TAGS = new Set<unknown>([
  "InvalidBoundary",
  "BadHeaders",
  "InvalidDisposition",
  "ReachedLimit",
  "EndNotReached"
] satisfies ReadonlyArray<MP.MultipartError["_tag"]>)

/** multipasta's failure, known by its tag (each tag comes with its own fields). */
const isMultipastaError = (cause: unknown): cause is MP.MultipartError =>
  Predicate.hasProperty(cause, "_tag") && MULTIPASTA_TAGS.has(cause._tag)

export const unwrapPlatformMultipart = (error: Multipart.MultipartError): Multipart.MultipartError =>
  error.reason === "InternalError" && isMultipastaError(error.cause) ? multipartError(error.cause) : error

/** Every part of a multipart body held in memory, or the first error (the parse is synchronous). */
const parseMultipart = (
  bytes: Uint8Array,
  headers: Record<string, string>
): Either.Either<ReadonlyArray<Multipart.Part>, Multipart.MultipartError> => {
  const parts: Array<Multipart.Part> = []
  let failure: MP.MultipartError | undefined
  const parser = MP.make({
    headers,
    maxParts: MAX_MULTIPART_PARTS,
    maxFieldSize: MAX_MULTIPART_FIELD_BYTES,
    onField: (info, value) => parts.push(new FieldPart(info.name, info.contentType, MP.decodeField(info, value))),
    onFile: (info) => {
      const chunks: Array<Uint8Array> = []
      parts.push(new FilePart(info, chunks))
      return (chunk) => {
        if (chunk !== null) chunks.push(chunk)
      }
    },
    onError: (error) => {
      failure ??= error
    },
    onDone: () => {}
  })
  parser.write(bytes)
  parser.end()
  return failure === undefined ? Either.right(parts) : Either.left(multipartError(failure))
}

abstract class PartBase extends Inspectable.Class {
  readonly [Multipart.TypeId]: Multipart.TypeId = Multipart.TypeId
}

class FieldPart extends PartBase implements Multipart.Field {
  readonly _tag = "Field"
  constructor(readonly key: string, readonly contentType: string, readonly value: string) {
    super()
  }
  toJSON(): unknown {
    return { _id: "@effect/platform/Multipart/Part", _tag: "Field", key: this.key, contentType: this.contentType }
  }
}

class FilePart extends PartBase implements Multipart.File {
  readonly _tag = "File"
  readonly key: string
  readonly name: string
  readonly contentType: string
  constructor(info: MP.PartInfo, private readonly chunks: ReadonlyArray<Uint8Array>) {
    super()
    this.key = info.name
    this.name = info.filename ?? info.name
    this.contentType = info.contentType
  }
  get content(): Stream.Stream<Uint8Array, Multipart.MultipartError> {
    return Stream.fromIterable(this.chunks)
  }
  get contentEffect(): Effect.Effect<Uint8Array, Multipart.MultipartError> {
    return Effect.sync(() => concatBytes(this.chunks, this.chunks.reduce((size, chunk) => size + chunk.length, 0)))
  }
  toJSON(): unknown {
    const { key, name, contentType } = this
    return { _id: "@effect/platform/Multipart/Part", _tag: "File", key, name, contentType }
  }
}

class PersistedFilePart extends PartBase implements Multipart.PersistedFile {
  readonly _tag = "PersistedFile"
  constructor(readonly key: string, readonly name: string, readonly contentType: string, readonly path: string) {
    super()
  }
  toJSON(): unknown {
    const { key, name, contentType, path } = this
    return { _id: "@effect/platform/Multipart/Part", _tag: "PersistedFile", key, name, contentType, path }
  }
}

/**
 * The parts as `Multipart.Persisted`, each file written to a temporary directory that lives as long as the
 * request's scope. A file's path is its position, never the client's file name, which the platform's
 * `toPersisted` uses: a name of `/` or `.` is the directory itself (a 500), and two parts sent with the same
 * name were one file, the back photo stored as the front.
 */
const persist = (
  parts: ReadonlyArray<Multipart.Part>
): Effect.Effect<Multipart.Persisted, Multipart.MultipartError, FileSystem.FileSystem | Path.Path | Scope.Scope> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const dir = yield* fs.makeTempDirectoryScoped()
    const fields: Record<string, string | Array<string>> = Object.create(null)
    const files: Record<string, Array<Multipart.PersistedFile>> = Object.create(null)
    let written = 0
    for (const part of parts) {
      if (part._tag === "Field") {
        const seen = fields[part.key]
        fields[part.key] = seen === undefined ? part.value : [...(typeof seen === "string" ? [seen] : seen), part.value]
      } else if (part._tag === "File" && part.name !== "") {
        // An empty file name is an empty file input of a form: no file (as the platform reads it).
        const file = new PersistedFilePart(part.key, part.name, part.contentType, path.join(dir, String(written++)))
        yield* fs.writeFile(file.path, yield* part.contentEffect)
        ;(files[part.key] ??= []).push(file)
      }
    }
    return { ...fields, ...files }
  }).pipe(
    // A file that cannot be written is the server's failure: a 500, as with the platform's reader.
    Effect.catchTags({
      SystemError: (cause) => Effect.fail(new Multipart.MultipartError({ reason: "InternalError", cause })),
      BadArgument: (cause) => Effect.fail(new Multipart.MultipartError({ reason: "InternalError", cause }))
    })
  )

// ---------------------------------------------------------------------------------------------------------
// The request handed on

interface ReadBody {
  readonly bytes: Uint8Array
  /** The UTF-8 text of a JSON body; a multipart body is bytes only. */
  readonly text: string | undefined
}

/**
 * `original` with its body read by the guard: every body accessor answers from the bytes (and text) already
 * read; everything else (method, url, headers, remote address…) is the original's.
 */
class GuardedRequest extends Inspectable.Class implements HttpServerRequest.HttpServerRequest {
  readonly [HttpServerRequest.TypeId]: HttpServerRequest.TypeId = HttpServerRequest.TypeId
  readonly [HttpIncomingMessage.TypeId]: HttpIncomingMessage.TypeId = HttpIncomingMessage.TypeId

  constructor(
    private readonly original: HttpServerRequest.HttpServerRequest,
    private readonly body: ReadBody
  ) {
    super()
  }

  private decodeError(cause: unknown): HttpServerError.RequestError {
    return new HttpServerError.RequestError({ request: this, reason: "Decode", cause })
  }

  get source() {
    return this.original.source
  }
  get url() {
    return this.original.url
  }
  get originalUrl() {
    return this.original.originalUrl
  }
  get method() {
    return this.original.method
  }
  get cookies() {
    return this.original.cookies
  }
  get headers() {
    return this.original.headers
  }
  get remoteAddress() {
    return this.original.remoteAddress
  }
  get upgrade() {
    return this.original.upgrade
  }
  /** The text, decoded leniently only when a JSON route was not the reader (never, today). */
  private get bodyText(): string {
    return this.body.text ?? new TextDecoder().decode(this.body.bytes)
  }
  get text(): Effect.Effect<string, HttpServerError.RequestError> {
    return Effect.sync(() => this.bodyText)
  }
  get json(): Effect.Effect<unknown, HttpServerError.RequestError> {
    return Effect.try({ try: (): unknown => JSON.parse(this.bodyText), catch: (cause) => this.decodeError(cause) })
  }
  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpServerError.RequestError> {
    return Effect.try({
      try: () => UrlParams.fromInput(new URLSearchParams(this.bodyText)),
      catch: (cause) => this.decodeError(cause)
    })
  }
  get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpServerError.RequestError> {
    const bytes = this.body.bytes
    // A copy of exactly the body's bytes, in an `ArrayBuffer` of their own.
    return Effect.sync(() => bytes.slice().buffer)
  }
  get stream(): Stream.Stream<Uint8Array, HttpServerError.RequestError> {
    return Stream.succeed(this.body.bytes)
  }
  get multipartStream(): Stream.Stream<Multipart.Part, Multipart.MultipartError> {
    return Stream.unwrap(Effect.sync(() =>
      Either.match(parseMultipart(this.body.bytes, this.headers), {
        onLeft: (error) => Stream.fail(error),
        onRight: (parts) => Stream.fromIterable(parts)
      })
    ))
  }
  get multipart(): Effect.Effect<
    Multipart.Persisted,
    Multipart.MultipartError,
    FileSystem.FileSystem | Path.Path | Scope.Scope
  > {
    return Effect.suspend(() =>
      Either.match(parseMultipart(this.body.bytes, this.headers), {
        onLeft: (error) => Effect.fail(error),
        onRight: persist
      })
    )
  }
  modify(options: Parameters<HttpServerRequest.HttpServerRequest["modify"]>[0]) {
    return new GuardedRequest(this.original.modify(options), this.body)
  }
  toJSON(): unknown {
    return this.original.toJSON()
  }
}
