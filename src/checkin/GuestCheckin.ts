import { FileSystem, type Multipart } from "@effect/platform"
import { BunFileSystem } from "@effect/platform-bun"
import { SqlClient } from "@effect/sql"
import { DateTime, Effect, Either } from "effect"
import { storedReports } from "../compliance/Simulated.ts"
import { MAX_DOCUMENT_BYTES, sniffDocument } from "../documents/DocumentKind.ts"
import { type DocumentSide, DocumentStore } from "../documents/DocumentStore.ts"
import * as Lifecycle from "../reservations/Lifecycle.ts"
import type { CheckinGuestInput } from "../reservations/Reservation.ts"
import type { ReservationRow } from "../reservations/ReservationRow.ts"
import { photosRetained, snapshotOf } from "../reservations/ReservationRow.ts"
import { isUniqueViolation, Reservations } from "../reservations/Reservations.ts"
import { DuplicateDocument, InvalidRequest, RegistrationNotFound, RegistrationRejected } from "../shared/errors.ts"
import { isUuid } from "../shared/Uuid.ts"
import { todayInBogota } from "../trm/Trm.ts"
import { Outbox } from "../webhooks/Outbox.ts"
import type { CheckinView } from "./Checkin.ts"

interface TokenRow extends ReservationRow {
  readonly motivo: string | null
  readonly property_name: string
  readonly requires_contract_signature: boolean
  readonly requires_document_photos: boolean
}

const notFound = () =>
  new RegistrationNotFound({ message: "This check-in link is unknown or has expired.", details: {} })

/**
 * The guest check-in JSON API behind `checkin_url` (design §5), scoped by the reservation's token: the token
 * stops working when the reservation is cancelled (409 reservation_cancelled) or 30 days after check-out (404
 * registration_not_found, like an unknown token). Guests register one by one; the first is the primary and
 * gives the trip's `motivo`; the last completes registration, which makes the reports due where no contract is
 * required (design §6.4). Every change writes its events in its transaction.
 */
export class GuestCheckin extends Effect.Service<GuestCheckin>()("checkin/GuestCheckin", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const outbox = yield* Outbox
    const reservations = yield* Reservations
    const store = yield* DocumentStore
    const fs = yield* Effect.provide(FileSystem.FileSystem, BunFileSystem.layer)

    /** The reservation of a live token (`lock`: inside a write's transaction). */
    const byToken = (token: string, lock: boolean) =>
      Effect.gen(function*() {
        if (!/^[A-Za-z0-9_-]{20,100}$/.test(token)) return yield* notFound()
        const [row] = yield* sql<TokenRow>`
          SELECT r.*, p.name AS property_name, p.requires_contract_signature, p.requires_document_photos
          FROM reservations r JOIN properties p ON p.id = r.property_id
          WHERE r.checkin_token = ${token} ${lock ? sql`FOR UPDATE OF r` : sql``}`
        if (row === undefined || !photosRetained(row.check_out, yield* todayInBogota)) return yield* notFound()
        if (row.reservation_status === "cancelled") return yield* Lifecycle.cancelledError()
        return row
      })

    const view = (token: string) =>
      Effect.gen(function*() {
        const row = yield* byToken(token, false)
        const guests = yield* sql<{
          id: string
          nombre: string
          apellido: string
          is_primary: boolean
          registered_at: Date | null
          document_uploaded: boolean
        }>`
          SELECT id, nombre, apellido, is_primary, registered_at, document_uploaded
          FROM guests WHERE reservation_id = ${row.id} ORDER BY position`
        const snapshot = snapshotOf(row)
        return {
          check_in: row.check_in,
          check_out: row.check_out,
          guests_count: row.guests_count,
          guests_registered: row.guests_registered,
          checkin_status: Lifecycle.checkinStatus(snapshot),
          contract_signed: snapshot.contract_signed,
          property: {
            name: row.property_name,
            requires_contract_signature: row.requires_contract_signature,
            requires_document_photos: row.requires_document_photos
          },
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
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    /** Writes the reservation after a lifecycle step, with its reports when they become due and its events. */
    const advance = (
      row: TokenRow,
      next: Lifecycle.LifecycleSnapshot,
      extra: { motivo?: string | null; signedAt?: Date; signer?: string }
    ) =>
      Effect.gen(function*() {
        const now = DateTime.toDateUtc(yield* DateTime.now)
        const before = snapshotOf(row)
        let snapshot = next
        let tra: Record<string, unknown> = row.tra
        let sire: Record<string, unknown> = row.sire
        if (!Lifecycle.reportsDue(before) && Lifecycle.reportsDue(next)) {
          const settings = yield* reservations.reportingSettings(row.property_id)
          const nationalities = yield* sql<{ nacionalidad: string | null }>`
            SELECT nacionalidad FROM guests WHERE reservation_id = ${row.id} AND registered_at IS NOT NULL ORDER BY position`
          const due = Lifecycle.reportsWhenDue({
            environment: row.environment,
            property: settings,
            nationalities: nationalities.map((guest) => guest.nacionalidad ?? "CO"),
            check_in: row.check_in,
            sandbox_simulate: row.sandbox_simulate
          })
          const stored = storedReports(due, now.toISOString())
          tra = stored.tra
          sire = stored.sire
          snapshot = Lifecycle.withReports(next, due)
        }
        const [updated] = yield* sql<ReservationRow>`
          UPDATE reservations SET
            guests_registered = ${snapshot.guests_registered},
            registration_complete = ${snapshot.registration_complete},
            completed_at = ${!before.registration_complete && snapshot.registration_complete ? now : row.completed_at},
            motivo = COALESCE(motivo, ${extra.motivo ?? null}),
            contract_signed_at = ${extra.signedAt ?? row.contract_signed_at},
            contract_signer = COALESCE(contract_signer, ${extra.signer ?? null}),
            tra = ${JSON.stringify(tra)}::jsonb,
            tra_reported = ${snapshot.tra.reported},
            sire = ${JSON.stringify(sire)}::jsonb,
            sire_reported = ${snapshot.sire.reported},
            status = ${Lifecycle.deriveStatus(snapshot)},
            updated_at = ${now}
          WHERE id = ${row.id}
          RETURNING *`
        yield* outbox.enqueue({
          accountId: row.account_id,
          environment: row.environment,
          reservationId: row.id,
          types: Lifecycle.eventsBetween(before, snapshot),
          data: reservations.views.eventData(updated!),
          guests: yield* reservations.guestsOf(updated!)
        })
        return updated!
      })

    /** `POST /api/checkin/{token}/guests`. */
    const register = (token: string, input: CheckinGuestInput) =>
      Effect.gen(function*() {
        const row = yield* byToken(token, true)
        const next = yield* Either.match(Lifecycle.registerGuest(snapshotOf(row)), {
          onLeft: Effect.fail,
          onRight: Effect.succeed
        })
        const [counted] = yield* sql<{ count: number }>`
          SELECT count(*)::int AS count FROM guests WHERE reservation_id = ${row.id}`
        const count = counted!.count
        // Where photos are required a guest may wait for its photo, unregistered: still, never more guests than
        // the stay has.
        if (count >= row.guests_count) {
          return yield* new RegistrationRejected({
            message: `all ${row.guests_count} guests of this stay have been entered`,
            details: { guests_count: row.guests_count }
          })
        }
        if (count === 0 && row.motivo === null && input.motivo === undefined) {
          return yield* new InvalidRequest({
            message: "motivo is required from the first guest",
            details: { fields: [{ field: "motivo", message: "is required for the first guest (the trip's reason)" }] }
          })
        }
        const now = DateTime.toDateUtc(yield* DateTime.now)
        // Where photos are required, a guest counts as registered once its front photo is stored (design §5).
        const registered = !row.requires_document_photos
        const [guest] = yield* sql<{ id: string }>`
          INSERT INTO guests ${
          sql.insert({
            reservation_id: row.id,
            position: count,
            is_primary: count === 0,
            tipo_documento: input.tipo_documento,
            numero_documento: input.numero_documento,
            nombre: input.nombre,
            apellido: input.apellido,
            nacionalidad: input.nacionalidad,
            fecha_nacimiento: input.fecha_nacimiento ?? null,
            pais_procedencia: input.pais_procedencia,
            ciudad_procedencia: input.ciudad_procedencia,
            pais_residencia: input.pais_residencia,
            ciudad_residencia: input.ciudad_residencia,
            email: input.email ?? null,
            phone: input.phone ?? null,
            address: input.address ?? null,
            document_uploaded: false,
            registered_at: registered ? now : null
          })
        } RETURNING id`
        if (!registered && input.motivo !== undefined) {
          // The trip's motivo is kept at once, even while the first guest waits for its photo.
          yield* sql`UPDATE reservations SET motivo = COALESCE(motivo, ${input.motivo}) WHERE id = ${row.id}`
        }
        const updated = registered ? yield* advance(row, next, { motivo: input.motivo ?? null }) : row
        const snapshot = snapshotOf(updated)
        return {
          guest_id: guest!.id,
          registered,
          guests_registered: updated.guests_registered,
          checkin_status: Lifecycle.checkinStatus(snapshot)
        }
      }).pipe(
        sql.withTransaction,
        Effect.catchTag("SqlError", (error) =>
          isUniqueViolation(error)
            ? Effect.fail(
              new DuplicateDocument({
                message: "A guest with this document number is already registered for this stay.",
                details: { field: "numero_documento" }
              })
            )
            : Effect.die(error))
      )

    /** `POST /api/checkin/{token}/contract`: only once every guest is registered (409 registration_open). */
    const sign = (token: string, signerName: string) =>
      Effect.gen(function*() {
        const row = yield* byToken(token, true)
        if (row.contract_signed_at !== null) {
          return { contract_signed: true as const, signed_at: row.contract_signed_at.toISOString() }
        }
        const next = yield* Either.match(Lifecycle.signContract(snapshotOf(row)), { onLeft: Effect.fail, onRight: Effect.succeed })
        const now = DateTime.toDateUtc(yield* DateTime.now)
        const updated = yield* advance(row, next, { signedAt: now, signer: signerName })
        return { contract_signed: true as const, signed_at: updated.contract_signed_at!.toISOString() }
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

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
          const row = yield* byToken(token, true)
          const [guest] = isUuid(guestId)
            ? yield* sql<{ id: string; registered_at: Date | null }>`
                SELECT id, registered_at FROM guests WHERE id = ${guestId} AND reservation_id = ${row.id} FOR UPDATE`
            : []
          if (guest === undefined) {
            return yield* new RegistrationNotFound({ message: "No such guest in this stay.", details: { guest_id: guestId } })
          }
          const now = DateTime.toDateUtc(yield* DateTime.now)
          for (const document of documents) {
            yield* store.put({ guestId: guest.id, side: document.side }, document.bytes)
            yield* sql`
              INSERT INTO guest_documents (guest_id, side, content_type, size_bytes, stored_at)
              VALUES (${guest.id}, ${document.side}, ${document.contentType}, ${document.bytes.byteLength}, ${now})
              ON CONFLICT (guest_id, side) DO UPDATE
              SET content_type = EXCLUDED.content_type, size_bytes = EXCLUDED.size_bytes, stored_at = EXCLUDED.stored_at`
          }
          yield* sql`UPDATE guests SET document_uploaded = true WHERE id = ${guest.id}`
          if (row.requires_document_photos && guest.registered_at === null) {
            const next = yield* Either.match(Lifecycle.registerGuest(snapshotOf(row)), {
              onLeft: Effect.fail,
              onRight: Effect.succeed
            })
            yield* sql`UPDATE guests SET registered_at = ${now} WHERE id = ${guest.id}`
            yield* advance(row, next, {})
          }
          return { document_uploaded: true as const }
        }).pipe(sql.withTransaction)
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    return { view, register, sign, uploadDocument } as const
  })
}) {}
