import { FileSystem, type Multipart } from "@effect/platform"
import { BunFileSystem } from "@effect/platform-bun"
import { SqlClient } from "@effect/sql"
import { DateTime, Effect, Option } from "effect"
import { isUniqueViolation } from "../db/SqlErrors.ts"
import { MAX_DOCUMENT_BYTES, sniffDocument } from "../documents/DocumentKind.ts"
import { type DocumentSide, DocumentStore } from "../documents/DocumentStore.ts"
import * as GuestDocuments from "../documents/GuestDocuments.ts"
import { Command } from "../reservations/machine/Machine.ts"
import { checkinStatus } from "../reservations/machine/State.ts"
import { cancelledError } from "../reservations/machine/Stay.ts"
import type { CheckinGuestInput } from "../reservations/Reservation.ts"
import { ReservationRepo } from "../reservations/ReservationRepo.ts"
import { photosRetained } from "../reservations/ReservationRow.ts"
import { Reservations } from "../reservations/Reservations.ts"
import { DuplicateDocument, InvalidRequest, RegistrationNotFound } from "../shared/errors.ts"
import { isUuid } from "../shared/Uuid.ts"
import { todayInBogota } from "../shared/Calendar.ts"
import type { CheckinView } from "./Checkin.ts"

const notFound = () =>
  new RegistrationNotFound({ message: "This check-in link is unknown or has expired.", details: {} })

/**
 * The guest check-in JSON API behind `checkin_url` (design §5), scoped by the reservation's token: the token
 * stops working when the reservation is cancelled (409 reservation_cancelled) or 30 days after check-out (404
 * registration_not_found, like an unknown token). Guests register one by one (the machine's `EnterGuest`); the
 * first is the primary and gives the trip's `motivo`; the last completes registration, which makes the reports
 * due where no contract is required (design §6.4). Every change goes through `Reservations.apply`.
 */
export class GuestCheckin extends Effect.Service<GuestCheckin>()("checkin/GuestCheckin", {
  dependencies: [ReservationRepo.Default],
  effect: Effect.gen(function*() {
    const { sql, reservations, repo, store } = yield* Effect.all({
      sql: SqlClient.SqlClient, reservations: Reservations, repo: ReservationRepo, store: DocumentStore
    })
    const fs = yield* Effect.provide(FileSystem.FileSystem, BunFileSystem.layer)

    /** The reservation of a live token, with what the page needs of its property. */
    const byToken = (token: string) =>
      Effect.gen(function*() {
        if (!/^[A-Za-z0-9_-]{20,100}$/.test(token)) return yield* notFound()
        const found = yield* repo.findByToken(token)
        if (Option.isNone(found) || !photosRetained(found.value.check_out, yield* todayInBogota)) return yield* notFound()
        const row = found.value
        if (row.reservation_status === "cancelled") return yield* cancelledError()
        const [property] = yield* sql<{
          readonly name: string
          readonly requires_contract_signature: boolean
          readonly requires_document_photos: boolean
        }>`SELECT name, requires_contract_signature, requires_document_photos FROM properties WHERE id = ${row.property_id}`
          .pipe(Effect.orDie)
        return property === undefined ? yield* Effect.dieMessage(`property ${row.property_id} is gone`) : { row, property }
      })

    const view = (token: string) =>
      Effect.gen(function*() {
        const { row, property } = yield* byToken(token)
        const guests = yield* repo.guests(row.id)
        return {
          check_in: row.check_in,
          check_out: row.check_out,
          guests_count: row.guests_count,
          guests_registered: row.guests_registered,
          checkin_status: checkinStatus(row),
          contract_signed: row.contract_signed_at !== null,
          property,
          // Names and progress only: no guest sees another's personal data (issue 6, security).
          guests: guests.map((guest) => ({
            guest_id: guest.id,
            nombre: guest.nombre,
            apellido: guest.apellido,
            is_primary: guest.is_primary,
            registered: guest.registered_at !== null,
            document_uploaded: guest.document_uploaded
          }))
        } satisfies CheckinView
      })

    const duplicateDocument = () =>
      new DuplicateDocument({
        message: "A guest with this document number is already registered for this stay.",
        details: { field: "numero_documento" }
      })

    /** `POST /api/checkin/{token}/guests`. */
    const register = (token: string, input: CheckinGuestInput) =>
      Effect.gen(function*() {
        const { row, property } = yield* byToken(token)
        const applied = yield* reservations.apply(row.id, Command.EnterGuest({ input, requiresDocumentPhotos: property.requires_document_photos }))
        const guest = applied.added[0]
        if (guest === undefined) return yield* Effect.dieMessage("enterGuest added no guest")
        return {
          guest_id: guest.id,
          registered: applied.result.registered,
          guests_registered: applied.row.guests_registered,
          checkin_status: checkinStatus(applied.row)
        }
      }).pipe(
        Effect.catchTag("SqlError", (error) => isUniqueViolation(error) ? Effect.fail(duplicateDocument()) : Effect.die(error))
      )

    /** `POST /api/checkin/{token}/contract`: only once every guest is registered (409 registration_open). */
    const sign = (token: string, signerName: string) =>
      Effect.gen(function*() {
        const { row } = yield* byToken(token)
        const { result } = yield* reservations.apply(row.id, Command.SignContract({ signer: signerName }))
        return { contract_signed: true as const, signed_at: result.signed_at.toISOString() }
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    const invalidFile = (field: DocumentSide, message: string) =>
      new InvalidRequest({ message: `${field} ${message}`, details: { fields: [{ field, message }] } })

    /** Reads an uploaded part and checks it: at most 10 MB, JPEG/PNG/PDF by content (design §5). */
    const readDocument = (field: DocumentSide, file: Multipart.PersistedFile) =>
      Effect.gen(function*() {
        const info = yield* fs.stat(file.path).pipe(Effect.orDie)
        if (Number(info.size) > MAX_DOCUMENT_BYTES) return yield* invalidFile(field, "must be at most 10 MB")
        const bytes = yield* fs.readFile(file.path).pipe(Effect.orDie)
        const contentType = sniffDocument(bytes)
        if (contentType === undefined) return yield* invalidFile(field, "must be a JPEG, PNG or PDF file")
        return { bytes, contentType }
      })

    /**
     * `PUT /api/checkin/{token}/guests/{guest_id}/document`: stores the photos through the DocumentStore (never
     * served back). Where the property requires photos, the front photo completes the guest's registration.
     */
    const uploadDocument = (
      token: string,
      guestId: string,
      front: Multipart.PersistedFile,
      back: Multipart.PersistedFile | undefined
    ) =>
      Effect.gen(function*() {
        const documents = [
          { side: "front" as const, ...(yield* readDocument("front", front)) },
          ...(back === undefined ? [] : [{ side: "back" as const, ...(yield* readDocument("back", back)) }])
        ]
        return yield* Effect.gen(function*() {
          const { row, property } = yield* byToken(token)
          if (!isUuid(guestId)) {
            return yield* new RegistrationNotFound({ message: "No such guest in this stay.", details: { guest_id: guestId } })
          }
          // The guest's flags and, where photos are required, its registration; then the files, in the same
          // transaction: a failed write leaves neither.
          yield* reservations.apply(row.id, Command.AttachDocument({ guestId, requiresDocumentPhotos: property.requires_document_photos }))
          const now = DateTime.toDateUtc(yield* DateTime.now)
          for (const document of documents) {
            yield* store.put({ guestId, side: document.side }, document.bytes)
            yield* GuestDocuments.recordStored({
              guestId,
              side: document.side,
              contentType: document.contentType,
              sizeBytes: document.bytes.byteLength,
              at: now
            }).pipe(Effect.provideService(SqlClient.SqlClient, sql))
          }
          return { document_uploaded: true as const }
        }).pipe(sql.withTransaction)
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    return { view, register, sign, uploadDocument } as const
  })
}) {}
