import fc from "fast-check"
import { Redacted } from "effect"
import { admin, call } from "../support/app.ts"
import { within } from "../support/process.ts"
import {
  checkInvariants,
  exitDay,
  type Guest,
  isMapped,
  mappedNow,
  type Model,
  type Nationality,
  fail,
  sireEntryMayHold,
  type Stay,
  SX_CODE,
  traMayHold
} from "./model.ts"
import { dayOf, spawnWorker, WORKER_LEASE_MS } from "./world.ts"

/**
 * The steps of a hotel's week, as fast-check commands over the real app (`Model` carries the world and the
 * sequence's hotel; the "real" side of `asyncModelRun` is unused). Each command issues its requests, updates
 * the model from the answers, then checks the invariants (`checkInvariants`). `toString` prints the step the way
 * a person would replay it.
 */
type Cmd = fc.AsyncCommand<Model, unknown>

let documentNumber = Math.floor(Math.random() * 1_000_000) * 1000 + 10_000_000_000

const guestBody = (guest: Guest, index: number): Record<string, unknown> => {
  const base = {
    numero_documento: guest.doc,
    nombre: ["Laura", "James", "Marie", "Pedro"][index % 4],
    apellido: ["Gomez Restrepo", "Miller", "de la Cruz Perez", "Silva"][index % 4],
    ciudad_procedencia: "Lima",
    ciudad_residencia: "Lima"
  }
  return guest.nat === "CO"
    ? { ...base, tipo_documento: "C.C", nacionalidad: "CO", pais_procedencia: "CO", pais_residencia: "CO" }
    : {
      ...base,
      tipo_documento: "Pasaporte",
      nacionalidad: guest.nat,
      fecha_nacimiento: "1985-04-12",
      pais_procedencia: guest.nat,
      pais_residencia: guest.nat
    }
}

const note = (model: Model, line: string) => void model.trace.push(line)
const stayAt = (model: Model, index: number): Stay | undefined =>
  model.stays.length === 0 ? undefined : model.stays[index % model.stays.length]
const label = (index: number) => `stay#${index}`

const expectStatus = (what: string, res: { status: number; body: unknown }, ...ok: Array<number>) => {
  if (!ok.includes(res.status)) throw new Error(`${what}: unexpected ${res.status} ${JSON.stringify(res.body)}`)
}

const registerGuests = async (model: Model, stay: Stay, count: number) => {
  for (const [index, guest] of stay.guests.entries()) {
    if (count <= 0) break
    if (guest.registered) continue
    const res = await call(model.world.app, "POST", `/api/checkin/${stay.checkinToken}/guests`, {
      json: { ...guestBody(guest, index), ...(index === 0 ? { motivo: "Vacaciones, recreo y ocio" } : {}) }
    })
    expectStatus(`register guest ${guest.doc}`, res, 201)
    guest.registered = true
    count--
  }
  if (stay.completedAt === null && stay.guests.every((guest) => guest.registered)) stay.completedAt = model.epoch
}

// ---------------------------------------------------------------------------------------------------------------

export class Create implements Cmd {
  constructor(
    readonly flow: "link" | "one",
    readonly nats: ReadonlyArray<Nationality>,
    readonly checkIn: number,
    readonly nights: number,
    readonly registerNow: number
  ) {}
  check = (model: Readonly<Model>) => model.stays.length < 4
  async run(model: Model) {
    const { world, hotel } = model
    const index = model.stays.length
    const externalId = `M${hotel.n}-${index}-${Date.now().toString(36)}`
    const guests = this.nats.map((nat) => ({ doc: nat === "CO" ? String(documentNumber++) : `P${documentNumber++}`, nat, registered: false }))
    const stay: Stay = {
      label: label(index),
      externalId,
      flow: this.flow,
      guests,
      checkinToken: null,
      checkIn: this.checkIn,
      checkOut: this.checkIn + this.nights,
      departed: null,
      cancelledAt: null,
      completedAt: null,
      exitDateSeen: new Map(),
      exitPendingSince: null,
      datesChangedAt: model.epoch
    }
    const common = {
      external_id: externalId,
      property_id: hotel.propertyId,
      check_in: dayOf(world, stay.checkIn),
      check_out: dayOf(world, stay.checkOut),
      guest_name: "Laura Gomez",
      guests_count: guests.length,
      room_number: "204",
      total_amount: 600000,
      currency: "COP"
    }
    if (this.flow === "one") {
      const res = await call(world.app, "POST", "/api/partners/registrations", {
        key: hotel.liveKey,
        json: { ...common, motivo: "Vacaciones, recreo y ocio", tipo_acomodacion: "Doble", guests: guests.map(guestBody) }
      })
      expectStatus("endpoint 7", res, 201)
      for (const guest of guests) guest.registered = true
      stay.completedAt = model.epoch
      model.stays.push(stay)
    } else {
      const res = await call<any>(world.app, "POST", "/api/partners/reservations", { key: hotel.liveKey, json: common })
      expectStatus("endpoint 3", res, 201)
      const token = String(res.body.checkin_url).split("/checkin/")[1]!
      const withToken = { ...stay, checkinToken: token }
      model.stays.push(withToken)
      await registerGuests(model, withToken, this.registerNow)
    }
    note(model, `${this}`)
    await checkInvariants(model)
  }
  toString() {
    return `create ${this.flow === "one" ? "endpoint7" : `link(register ${Math.min(this.registerNow, this.nats.length)} now)`} [${this.nats.join(",")}] in ${this.checkIn} out ${this.checkIn + this.nights}`
  }
}

export class Register implements Cmd {
  constructor(readonly stay: number, readonly count: number) {}
  check = (model: Readonly<Model>) => model.stays.some((s) => s.flow === "link" && s.cancelledAt === null && s.guests.some((g) => !g.registered))
  async run(model: Model) {
    const open = model.stays.filter((s) => s.flow === "link" && s.cancelledAt === null && s.guests.some((g) => !g.registered))
    const stay = open[this.stay % open.length]!
    await registerGuests(model, stay, this.count)
    note(model, `register ${this.count} guest(s) of ${stay.label}`)
    await checkInvariants(model)
  }
  toString() {
    return `register ${this.count} guest(s) of open link stay #${this.stay}`
  }
}

export class Update implements Cmd {
  constructor(readonly stay: number, readonly kind: "extend" | "shorten" | "move", readonly days: number) {}
  check = (model: Readonly<Model>) => model.stays.length > 0
  async run(model: Model) {
    const stay = stayAt(model, this.stay)!
    const checkIn = this.kind === "move" ? stay.checkIn + this.days : stay.checkIn
    const checkOut = this.kind === "extend"
      ? stay.checkOut + this.days
      : this.kind === "shorten"
      ? Math.max(stay.checkIn + 1, stay.checkOut - this.days)
      : stay.checkOut + this.days
    const json = {
      external_id: stay.externalId,
      ...(this.kind === "move" ? { check_in: dayOf(model.world, checkIn) } : {}),
      check_out: dayOf(model.world, checkOut)
    }
    const res = await call(model.world.app, "PATCH", "/api/partners/reservations", { key: model.hotel.liveKey, json })
    // A recorded departure must stay within the stay (400 otherwise).
    const outsideDeparture = stay.departed !== null && (stay.departed < checkIn || stay.departed > checkOut)
    expectStatus(`PATCH ${JSON.stringify(json)}`, res, 200, 409, ...(outsideDeparture ? [400] : []))
    if (res.status === 200) {
      stay.checkIn = checkIn
      stay.checkOut = checkOut
      stay.datesChangedAt = model.epoch
    }
    note(model, `${this.kind} ${stay.label} to in ${checkIn} out ${checkOut}: ${res.status}`)
    await checkInvariants(model)
  }
  toString() {
    return `${this.kind} stay #${this.stay} by ${this.days}`
  }
}

export class Depart implements Cmd {
  constructor(readonly stay: number, readonly back: number) {}
  check = (model: Readonly<Model>) => model.world.hasDeparture && model.stays.some((s) => s.checkIn <= 0)
  async run(model: Model) {
    const candidates = model.stays.filter((s) => s.checkIn <= 0)
    const stay = candidates[this.stay % candidates.length]!
    const day = Math.max(stay.checkIn, Math.min(stay.checkOut, 0) - this.back)
    const res = await call(model.world.app, "POST", "/api/partners/reservations/departure", {
      key: model.hotel.liveKey,
      json: { external_id: stay.externalId, departed_on: dayOf(model.world, day) }
    })
    expectStatus("departure", res, 200, 409)
    if (res.status === 200 && stay.departed !== day) {
      stay.departed = day
      stay.datesChangedAt = model.epoch
    }
    note(model, `depart ${stay.label} on ${day}: ${res.status}`)
    await checkInvariants(model)
  }
  toString() {
    return `depart stay #${this.stay} ${this.back} day(s) before min(check_out, today)`
  }
}

export class Cancel implements Cmd {
  constructor(readonly stay: number) {}
  check = (model: Readonly<Model>) => model.stays.length > 0
  async run(model: Model) {
    const stay = stayAt(model, this.stay)!
    const expected = { tra: traMayHold(model, stay), sire: sireEntryMayHold(model, stay) }
    const res = await call<any>(model.world.app, "POST", "/api/partners/reservations/cancel", {
      key: model.hotel.liveKey,
      json: { external_id: stay.externalId }
    })
    expectStatus("cancel", res, 200)
    if (stay.cancelledAt === null) {
      stay.cancelledAt = model.epoch
      stay.datesChangedAt = model.epoch
    }
    note(model, `cancel ${stay.label}: already_reported ${JSON.stringify(res.body.already_reported)}`)
    const got = res.body.already_reported
    if (got?.tra !== expected.tra) {
      fail(model, "d-tra", `cancelling ${stay.label} answered already_reported.tra ${got?.tra}, but the fake TRA ${expected.tra ? "holds or may hold it" : "holds nothing of it"}`)
    }
    if (got?.sire !== expected.sire) {
      fail(model, "d-sire", `cancelling ${stay.label} answered already_reported.sire ${got?.sire}, but the fake SIRE ${expected.sire ? "holds or may hold its entry" : "holds nothing of it"}`)
    }
    await checkInvariants(model)
  }
  toString() {
    return `cancel stay #${this.stay}`
  }
}

export class Run implements Cmd {
  constructor(readonly advance: number) {}
  check = () => true
  async run(model: Model) {
    const date = Math.min(0, Math.max(-3, model.clock + this.advance))
    model.epoch++
    model.world.traProxy.epoch = model.epoch
    model.world.sireProxy.epoch = model.epoch
    const summary = await admin(model.world.app, (c) => c.RunReports({ date: dayOf(model.world, date) }))
    model.clock = date
    model.runs.push({
      epoch: model.epoch,
      date,
      completed: true,
      sireUp: model.sire === "up" && model.sireCredentialsValid,
      mapped: mappedNow(model)
    })
    note(model, `run ${model.epoch} on day ${date}: ${JSON.stringify(summary)} (tra ${model.tra}${model.traTokenValid ? "" : ", token revoked"}, sire ${model.sire}${model.sireCredentialsValid ? "" : ", refused"})`)
    await checkInvariants(model)
  }
  toString() {
    return `run reports, clock +${this.advance}`
  }
}

export class Outage implements Cmd {
  constructor(readonly authority: "tra" | "sire", readonly state: "up" | "5xx" | "drop" | "lost" | "reject") {}
  check = () => true
  async run(model: Model) {
    model[this.authority] = this.state
    note(model, `${this}`)
    await checkInvariants(model)
  }
  toString() {
    return `${this.authority.toUpperCase()} ${
      this.state === "up"
        ? "back up"
        : this.state === "lost"
        ? "loses its answers"
        : this.state === "drop"
        ? "down (no answer)"
        : this.state === "reject"
        ? "rejects what it gets"
        : "down (503)"
    }`
  }
}

export class Credentials implements Cmd {
  constructor(readonly authority: "tra" | "sire", readonly valid: boolean) {}
  check = () => true
  async run(model: Model) {
    const { hotel } = model
    if (this.authority === "tra") {
      const token = this.valid ? hotel.traToken : `revoked-${hotel.traToken}`
      await admin(model.world.app, (c) => c.UpdateProperty({ property_id: hotel.propertyId, tra_token: Redacted.make(token) }))
      model.traTokenValid = this.valid
    } else {
      const code = this.valid ? hotel.hotelCode : hotel.revokedHotelCode
      await admin(model.world.app, (c) => c.UpdateProperty({ property_id: hotel.propertyId, sire_hotel_code: code }))
      model.sireCredentialsValid = this.valid
    }
    note(model, `${this}`)
    await checkInvariants(model)
  }
  toString() {
    return `${this.authority === "tra" ? "TRA token" : "SIRE credentials"} ${this.valid ? "restored" : "removed"}`
  }
}

export class Reference implements Cmd {
  constructor(readonly key: "SX" | "US", readonly action: "set" | "unmap" | "unset") {}
  check = (model: Readonly<Model>) => this.action !== "unset" || model.overrides.has(this.key)
  async run(model: Model) {
    const table = "sire-countries" as const
    try {
      if (this.action === "unset") await admin(model.world.app, (c) => c.UnsetReference({ table, key: this.key }))
      else {
        const value = this.action === "unmap" ? null : this.key === "SX" ? SX_CODE : "249"
        await admin(model.world.app, (c) => c.SetReference({ table, key: this.key, value, note: "model test" }))
      }
      if (this.action === "unset") model.overrides.delete(this.key)
      else model.overrides.set(this.key, this.action === "unmap" ? null : "set")
      note(model, `${this} (mapped now: ${isMapped(model, this.key)})`)
    } catch (error) {
      note(model, `${this}: refused ${String(error)}`)
    }
    await checkInvariants(model)
  }
  toString() {
    return `reference ${this.action} sire-countries ${this.key}`
  }
}

export const FAILPOINTS = [
  "report.after_claim",
  "tra.before_send",
  "tra.after_answer",
  "tra.after_record",
  "sire.before_send",
  "sire.after_answer",
  "sire.after_record"
] as const

export class Crash implements Cmd {
  constructor(readonly failpoint: (typeof FAILPOINTS)[number]) {}
  check = (model: Readonly<Model>) => model.crashes === 0
  async run(model: Model) {
    const { world } = model
    model.crashes++
    model.epoch++
    world.traProxy.epoch = model.epoch
    world.sireProxy.epoch = model.epoch
    const worker = await spawnWorker(world, this.failpoint)
    // The worker's start-up run happens on the real date (day 0); it dies at the failpoint, or finishes its run.
    const outcome = await within(
      60_000,
      `worker with ${this.failpoint}`,
      Promise.race([
        worker.child.exited.then(() => "killed" as const),
        (async () => {
          await worker.ready(60_000)
          for (let i = 0; i < 50; i++) {
            if (worker.child.exitCode !== null || worker.child.signalCode !== null) return "killed" as const
            if (/report run/.test(worker.output()) || i > 20) return "finished" as const
            await Bun.sleep(100)
          }
          return "finished" as const
        })()
      ])
    )
    if (outcome === "finished" && worker.child.signalCode === null) await worker.stop()
    else await worker.child.exited
    const died = worker.child.signalCode === "SIGKILL"
    // What the worker had in flight when it stopped: the TRA guests marked sending, the SIRE file being uploaded
    // (the service cannot know whether those reached the authority, so the authority may hold them).
    const sending = await world.db.query<{ doc: string }>(
      `SELECT g.numero_documento AS doc FROM tra_submissions s JOIN guests g ON g.id = s.guest_id
       JOIN reservations r ON r.id = s.reservation_id
       WHERE s.sending_since IS NOT NULL AND s.state = 'pending' AND r.property_id = $1`,
      [model.hotel.propertyId]
    )
    for (const row of sending) model.traInFlightAtCrash.add(row.doc)
    // (`cli sire files` lists manual files only: the gateway's file in flight is read from its table.)
    const files = await world.db.query<{ content: string }>(
      "SELECT content FROM sire_files WHERE property_id = $1 AND state = 'sending'",
      [model.hotel.propertyId]
    )
    for (const file of files) {
      for (const row of file.content.split("\r\n").filter((r) => r !== "").map((r) => r.split("\t"))) {
        if (row[8] === "E") model.sireInFlightAtCrash.add(row[3]!)
      }
    }
    model.clock = Math.max(model.clock, 0)
    model.runs.push({
      epoch: model.epoch,
      date: 0,
      completed: !died,
      sireUp: !died && model.sire === "up" && model.sireCredentialsValid,
      mapped: mappedNow(model)
    })
    // The crashed run's leases lapse before the next run.
    await Bun.sleep(WORKER_LEASE_MS + 200)
    note(model, `worker with ${this.failpoint} on day 0: ${died ? "killed" : "finished without reaching it"}`)
    await checkInvariants(model)
  }
  toString() {
    return `crash a worker at ${this.failpoint}, then restart`
  }
}

// ---------------------------------------------------------------------------------------------------------------

const nationality = fc.constantFrom<Nationality>("CO", "CO", "US", "FR", "AR", "SX")

export const commandArbitraries = (options: { readonly crashes: boolean }): Array<fc.Arbitrary<Cmd>> => {
  const weighted = (weight: number, arbitrary: fc.Arbitrary<Cmd>) => ({ weight, arbitrary })
  return [fc.oneof(
    weighted(
      5,
      fc.tuple(
        fc.constantFrom<"link" | "one">("link", "one"),
        fc.array(nationality, { minLength: 1, maxLength: 3 }),
        fc.integer({ min: -3, max: 1 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 0, max: 3 })
      ).map(([flow, nats, checkIn, nights, now]) => new Create(flow, nats, checkIn, nights, now))
    ),
    weighted(2, fc.tuple(fc.nat(3), fc.integer({ min: 1, max: 3 })).map(([stay, count]) => new Register(stay, count))),
    weighted(
      2,
      fc.tuple(fc.nat(3), fc.constantFrom<"extend" | "shorten" | "move">("extend", "shorten", "move"), fc.integer({ min: 1, max: 2 }))
        .map(([stay, kind, days]) => new Update(stay, kind, kind === "move" && days === 2 ? -1 : days))
    ),
    weighted(2, fc.tuple(fc.nat(3), fc.nat(2)).map(([stay, back]) => new Depart(stay, back))),
    weighted(1, fc.nat(3).map((stay) => new Cancel(stay))),
    weighted(5, fc.constantFrom(0, 1, 1, 1, 2).map((advance) => new Run(advance))),
    weighted(
      2,
      fc.tuple(
        fc.constantFrom<"tra" | "sire">("tra", "sire"),
        fc.constantFrom<"up" | "5xx" | "drop" | "lost" | "reject">("up", "up", "5xx", "drop", "lost", "reject")
      )
        .map(([authority, state]) => new Outage(authority, state))
    ),
    weighted(1, fc.tuple(fc.constantFrom<"tra" | "sire">("tra", "sire"), fc.boolean()).map(([authority, valid]) => new Credentials(authority, valid))),
    weighted(
      1,
      fc.tuple(fc.constantFrom<"SX" | "US">("SX", "SX", "US"), fc.constantFrom<"set" | "unmap" | "unset">("set", "set", "unmap", "unset"))
        .map(([key, action]) => new Reference(key, action))
    ),
    ...(options.crashes ? [weighted(2, fc.constantFrom(...FAILPOINTS).map((failpoint): Cmd => new Crash(failpoint)))] : [])
  )]
}

export { exitDay }

/**
 * The rest of the week, after the drawn steps: the authorities come back and the credentials are restored, then
 * a run on every remaining day up to today and two more today, each followed by the invariants. Deterministic, so
 * a shrunk sequence stays a replayable story.
 */
export const finishWeek = async (model: Model) => {
  note(model, "-- the rest of the week --")
  const steps: Array<Cmd> = [
    ...(model.tra === "up" ? [] : [new Outage("tra", "up")]),
    ...(model.sire === "up" ? [] : [new Outage("sire", "up")]),
    ...(model.traTokenValid ? [] : [new Credentials("tra", true)]),
    ...(model.sireCredentialsValid ? [] : [new Credentials("sire", true)])
  ]
  for (const step of steps) await step.run(model, undefined)
  const run = (advance: number): Cmd => new Run(advance)
  while (model.clock < 0) await run(1).run(model, undefined)
  // Two more today: what a late entry owes goes out "in the same run or the next one" (design §6.8).
  await run(0).run(model, undefined)
  await run(0).run(model, undefined)
}
