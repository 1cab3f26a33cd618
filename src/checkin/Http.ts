import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { PartnerApi } from "../http/PartnerApi.ts"
import { GuestCheckin } from "./GuestCheckin.ts"

export const CheckinLive = HttpApiBuilder.group(PartnerApi, "checkin", (handlers) =>
  Effect.gen(function*() {
    const checkin = yield* GuestCheckin
    return handlers
      .handle("view", ({ path }) => checkin.view(path.token))
      .handle("register", ({ path, payload }) => checkin.register(path.token, payload))
      .handle("document", ({ path, payload }) => checkin.uploadDocument(path.token, path.guest_id, payload.front, payload.back))
      .handle("sign", ({ path, payload }) => checkin.sign(path.token, payload.signer_name))
  }))
