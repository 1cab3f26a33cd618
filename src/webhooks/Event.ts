import { randomBytes } from "node:crypto"
import type { LifecycleEvent } from "../reservations/Lifecycle.ts"
import { API_VERSION } from "../shared/ApiVersion.ts"

/** `evt_` followed by 32 hex characters (spec "Events": body `id`, header `X-Service-Event-Id`). */
export const newEventId = () => `evt_${randomBytes(16).toString("hex")}`

/** The webhook body of the spec's "Events" section; `data` is the reservation as of the event. */
export interface EventBody {
  readonly id: string
  readonly type: LifecycleEvent
  readonly created_at: string
  readonly api_version: string
  readonly sandbox: boolean
  readonly data: Readonly<Record<string, unknown>>
}

/** Registration events keep `guests`; delivery drops them for endpoints without include_guests (design §6.14). */
export const carriesGuests = (type: LifecycleEvent) => type.startsWith("registration.")

export const eventBody = (input: {
  readonly id: string
  readonly type: LifecycleEvent
  readonly createdAt: Date
  readonly sandbox: boolean
  readonly data: Readonly<Record<string, unknown>>
  readonly guests: ReadonlyArray<unknown>
}): EventBody => ({
  id: input.id,
  type: input.type,
  created_at: input.createdAt.toISOString(),
  api_version: API_VERSION,
  sandbox: input.sandbox,
  data: carriesGuests(input.type) ? { ...input.data, guests: input.guests } : input.data
})
