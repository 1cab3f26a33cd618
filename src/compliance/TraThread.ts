import { errorCode } from "../net/ErrorCode.ts"

/**
 * The TRA thread: a worker thread that holds the service's connections to MinCIT's TRA web service and nothing
 * else (docs/performance.md, "The TRA thread"). `TraClient` hands it each submission and classifies what comes back;
 * this module is what runs in it (`src/tra-thread.ts`), and the messages both sides speak.
 *
 * Why a thread: a report run keeps the authority's `TRA_CONCURRENCY` slots busy only if a slot is refilled the
 * moment an answer arrives. On the service's one JavaScript thread an answer waits for whatever that thread is
 * doing — a reservation's statements and decoding, a partner's request — and the slot stays empty meanwhile (the
 * fake TRA of `npm run bench:reports` saw 3.56 of 4 requests in flight on a 2-vCPU host). Here nothing else runs:
 * a slot is refilled from the requests waiting in this thread as soon as its answer is read.
 *
 * Why plain `fetch` and no Effect here: the same transport written with Effect's `HttpClient`, `Semaphore` and
 * `timeout` in this thread cost it ~690 µs of CPU per request against ~140 µs (its JIT and collector beside), and
 * on two cores that made the run slower than no thread at all (measured in docs/performance.md). Everything with
 * a decision in it — the token check, the classification, the scrubbing, spans, logs and metrics — stays in
 * `TraClient`, on the caller's side; this thread only sends bytes, under the limit and the timeout, and reports
 * what happened. It imports nothing of Effect.
 */

/** The thread's settings: its first message. */
export interface Start {
  readonly _tag: "Start"
  /** `{base}/one/`, `{base}/two/`: the base without a trailing slash. */
  readonly prefix: string
  /** Most requests in flight at once; the others wait in arrival order. */
  readonly concurrency: number
  /** Limit of one request from the moment it has a slot: connection, answer and body. */
  readonly timeoutMillis: number
}

/** One submission, its headers (the token checked and trimmed) as `TraClient` built them. */
export interface Post {
  readonly _tag: "Post"
  readonly id: number
  readonly endpoint: "/one/" | "/two/"
  readonly headers: Readonly<Record<string, string>>
  readonly body: Readonly<Record<string, string>>
}

/** The caller stopped waiting: the request leaves the queue, or is aborted if it was sent. */
export interface Cancel {
  readonly _tag: "Cancel"
  readonly id: number
}

export type ToThread = Start | Post | Cancel

/** How a request ended: a complete answer, or none (`kind` says where it stopped; only codes, never messages). */
export type Result =
  | { readonly _tag: "Answered"; readonly status: number; readonly text: string; readonly location: string | null }
  | {
    readonly _tag: "Lost"
    readonly kind: "Timeout" | "Request" | "Response"
    readonly code: string | null
    readonly status: number | null
  }

/** A request's end, with when it had its slot and when it ended (epoch milliseconds, fractional). */
export interface Answer {
  readonly _tag: "Answer"
  readonly id: number
  readonly result: Result
  readonly startedAt: number
  readonly endedAt: number
}

export type FromThread = Answer

/** The worker's side of its port (`self` in the thread). */
export interface ThreadPort {
  postMessage(message: FromThread): void
  onmessage: ((event: MessageEvent<ToThread>) => void) | null
}

const now = () => performance.timeOrigin + performance.now()

/** Serves the service's messages in the thread. */
export const serve = (port: ThreadPort): void => {
  let settings: Start | undefined
  const queued: Array<Post> = []
  const sending = new Map<number, AbortController>()

  const send = (post: Post, { prefix, timeoutMillis }: Start) => {
    const cancel = new AbortController()
    const timeout = AbortSignal.timeout(timeoutMillis)
    sending.set(post.id, cancel)
    const startedAt = now()
    let status: number | null = null
    let location: string | null = null
    fetch(`${prefix}${post.endpoint}`, {
      method: "POST",
      headers: post.headers,
      body: JSON.stringify(post.body),
      // Redirects are not followed: the token must not travel to another address (TraClient's classification).
      redirect: "manual",
      signal: AbortSignal.any([timeout, cancel.signal])
    }).then((response) => {
      status = response.status
      location = response.headers.get("location")
      return response.text()
    }).then(
      (text): Result => ({ _tag: "Answered", status: status!, text, location }),
      (error: unknown): Result => ({
        _tag: "Lost",
        kind: timeout.aborted ? "Timeout" : status === null ? "Request" : "Response",
        code: errorCode(error) ?? null,
        status
      })
    ).then((result) => {
      sending.delete(post.id)
      // The slot first: the next request leaves before this answer is handed over.
      fill()
      if (!cancel.signal.aborted) port.postMessage({ _tag: "Answer", id: post.id, result, startedAt, endedAt: now() })
    })
  }

  const fill = () => {
    if (settings === undefined) return
    while (sending.size < settings.concurrency && queued.length > 0) send(queued.shift()!, settings)
  }

  port.onmessage = (event) => {
    const message = event.data
    switch (message._tag) {
      case "Start":
        settings = message
        return fill()
      case "Post":
        queued.push(message)
        return fill()
      case "Cancel": {
        const index = queued.findIndex((post) => post.id === message.id)
        if (index >= 0) queued.splice(index, 1)
        sending.get(message.id)?.abort()
        return
      }
    }
  }
}
