import { admin, call } from "../support/app.ts"
import type { ProxiedRequest } from "./authorityProxy.ts"
import { dayOf, type Hotel, type World } from "./world.ts"

/**
 * The model of one sequence (a hotel's week): the commands issued and what they were answered, plus what the
 * authorities received (the proxies' logs, which carry the fakes' own answers). The service's state is read only
 * through its public API (GET registrations), the admin RPC (reports list, SIRE files), and — for "the service
 * recorded it as a possible duplicate" and for which TRA guest a crashed worker had in flight — its tables.
 *
 * Days are offsets from Bogotá's date when the world started (day 0 = "today" for the service). Runs happen on
 * the model's clock, day -3 to day 0, never later than today (a departure or a cancellation cannot be in the
 * future).
 */

export type Nationality = "CO" | "US" | "FR" | "AR" | "SX"
/** SX (Sint Maarten) has no bundled SIRE code: its guests wait until an operator sets one. */
export const BUNDLED_UNMAPPED: ReadonlySet<string> = new Set(["SX"])
/** An override the fake SIRE accepts and no bundled country uses (C12's ANTILLAS HOLANDESAS). */
export const SX_CODE = "921"

export interface Guest {
  readonly doc: string
  readonly nat: Nationality
  registered: boolean
}

export interface Stay {
  readonly label: string
  readonly externalId: string
  readonly flow: "link" | "one"
  readonly guests: Array<Guest>
  readonly checkinToken: string | null
  checkIn: number
  checkOut: number
  departed: number | null
  /** The epoch (runs started so far) when the stay was cancelled. */
  cancelledAt: number | null
  /** The epoch when registration completed (reports due from then on). */
  completedAt: number | null
  /** Per foreign guest: the exit date expected when its S line was first seen accepted. */
  readonly exitDateSeen: Map<string, number>
  /** The epoch at which the exit was first seen `pending` (per stay). */
  exitPendingSince: number | null
  /**
   * The epoch of the last accepted change of the stay's dates (PATCH, departure, cancellation): a due date that
   * moved earlier is owed from the next run, not from runs that happened before the change.
   */
  datesChangedAt: number
}

export interface RunRecord {
  readonly epoch: number
  readonly date: number
  /** The run ran to its end (a crashed worker's run did not). */
  readonly completed: boolean
  readonly sireUp: boolean
  readonly mapped: ReadonlySet<string>
}

export type AuthorityState = "up" | "5xx" | "drop" | "lost" | "reject"

export interface Model {
  readonly world: World
  readonly hotel: Hotel
  readonly stays: Array<Stay>
  /** Runs started so far (report runs and crashed workers' runs). */
  epoch: number
  /** The model's clock: the date of the last run (-4 before any). */
  clock: number
  readonly runs: Array<RunRecord>
  tra: AuthorityState
  sire: AuthorityState
  traTokenValid: boolean
  sireCredentialsValid: boolean
  readonly overrides: Map<string, string | null>
  crashes: number
  /** TRA documents a crashed worker had in flight (its request may have left). */
  readonly traInFlightAtCrash: Set<string>
  /** SIRE entry documents in a file a crashed worker was uploading. */
  readonly sireInFlightAtCrash: Set<string>
  /** What happened, for the failure report. */
  readonly trace: Array<string>
}

export const newModel = (world: World, hotel: Hotel): Model => {
  const model = makeModel(world, hotel)
  // The authorities answer as the model says, for this sequence's hotel.
  world.traProxy.modeFor = () => model.tra
  world.sireProxy.modeFor = ({ headers }) =>
    headers["x-sire-hotel-code"] === hotel.revokedHotelCode ? "refuse" : model.sire
  return model
}

const makeModel = (world: World, hotel: Hotel): Model => ({
  world,
  hotel,
  stays: [],
  epoch: 0,
  clock: -4,
  runs: [],
  tra: "up",
  sire: "up",
  traTokenValid: true,
  sireCredentialsValid: true,
  overrides: new Map(),
  crashes: 0,
  traInFlightAtCrash: new Set(),
  sireInFlightAtCrash: new Set(),
  trace: []
})

export const isMapped = (model: Model, nat: string) =>
  model.overrides.has(nat) ? model.overrides.get(nat) !== null : !BUNDLED_UNMAPPED.has(nat)

export const mappedNow = (model: Model): ReadonlySet<string> =>
  new Set((["US", "FR", "AR", "SX"] as const).filter((nat) => isMapped(model, nat)))

/** The expected exit day of a stay: the departure, else a cancellation (day 0) before check_out, else check_out. */
export const exitDay = (stay: Stay) =>
  Math.min(stay.checkOut, stay.departed ?? Infinity, stay.cancelledAt === null ? Infinity : 0)

// ---------------------------------------------------------------------------------------------------------------
// What the authorities received

const json = (text: string | undefined): any => {
  try {
    return text === undefined ? undefined : JSON.parse(text)
  } catch {
    return undefined
  }
}

export interface TraFact {
  readonly doc: string
  readonly path: string
  readonly checkIn: string
  readonly checkOut: string
  readonly epoch: number
  /** The fake registered it (issued a code). */
  readonly registered: boolean
  /** The service cannot know whether it was registered (5xx, no answer, lost answer). */
  readonly unknown: boolean
}

export const traFacts = (model: Model): Array<TraFact> =>
  model.world.traProxy.log.flatMap((request: ProxiedRequest) => {
    const body = json(request.body)
    if (body === undefined || typeof body.numero_identificacion !== "string") return []
    const answer = json(request.fakeBody)
    const registered = request.fakeStatus !== undefined && request.fakeStatus >= 200 && request.fakeStatus < 300 &&
      typeof answer?.code === "number"
    const unknown = !request.delivered || request.mode === "5xx" ||
      (request.fakeStatus !== undefined && request.fakeStatus >= 500)
    return [{
      doc: body.numero_identificacion,
      path: request.path,
      checkIn: String(body.check_in),
      checkOut: String(body.check_out),
      epoch: request.epoch,
      registered,
      unknown
    }]
  })

export interface SireLine {
  readonly doc: string
  readonly movement: string
  /** dd/mm/yyyy */
  readonly date: string
  readonly epoch: number
  readonly accepted: boolean
  /** The upload's outcome is unknown to the service (5xx, no answer, lost answer). */
  readonly unknown: boolean
}

export const sireLines = (model: Model): Array<SireLine> =>
  model.world.sireProxy.log.flatMap((request) => {
    const rows = request.body.split("\r\n").filter((row) => row !== "").map((row) => row.split("\t"))
    const answer = json(request.fakeBody)
    const rejected = new Set<number>(
      Array.isArray(answer?.errors) ? answer.errors.map((error: { line: number }) => error.line) : []
    )
    const answered = request.fakeStatus === 200 && answer !== undefined && typeof answer.processed === "number"
    const unknown = !request.delivered || request.mode === "5xx" ||
      (request.fakeStatus !== undefined && request.fakeStatus >= 500)
    return rows.map((row, index) => ({
      doc: row[3] ?? "",
      movement: row[8] ?? "",
      date: row[9] ?? "",
      epoch: request.epoch,
      accepted: answered && !rejected.has(index + 1),
      unknown
    }))
  })

export const sireDate = (world: Pick<World, "today">, day: number) => {
  const [y, m, d] = dayOf(world, day).split("-")
  return `${d}/${m}/${y}`
}

/** Whether the TRA holds or may hold any guest of the stay. */
export const traMayHold = (model: Model, stay: Stay, facts = traFacts(model)) => {
  const docs = new Set(stay.guests.map((guest) => guest.doc))
  return facts.some((fact) => docs.has(fact.doc) && (fact.registered || fact.unknown)) ||
    stay.guests.some((guest) => model.traInFlightAtCrash.has(guest.doc))
}

/** Whether SIRE holds or may hold the entry of any guest of the stay. */
export const sireEntryMayHold = (model: Model, stay: Stay, lines = sireLines(model)) => {
  const docs = new Set(stay.guests.map((guest) => guest.doc))
  return lines.some((line) => line.movement === "E" && docs.has(line.doc) && (line.accepted || line.unknown)) ||
    stay.guests.some((guest) => model.sireInFlightAtCrash.has(guest.doc))
}

// ---------------------------------------------------------------------------------------------------------------
// Reading the service

export const detail = async (model: Model, stay: Stay): Promise<any> => {
  const res = await call(model.world.app, "GET", `/api/partners/registrations?external_id=${encodeURIComponent(stay.externalId)}`, {
    key: model.hotel.liveKey
  })
  if (res.status !== 200) throw new Error(`GET ${stay.externalId}: ${res.status} ${JSON.stringify(res.body)}`)
  return res.body
}

const possibleDuplicates = async (model: Model, docs: ReadonlyArray<string>) => {
  const tra = await model.world.db.query<{ doc: string }>(
    `SELECT g.numero_documento AS doc FROM tra_submissions s JOIN guests g ON g.id = s.guest_id
     WHERE s.possible_duplicate AND g.numero_documento = ANY($1)`,
    [docs]
  )
  const sire = await model.world.db.query<{ doc: string; movement: string }>(
    `SELECT g.numero_documento AS doc, m.movement FROM sire_movements m JOIN guests g ON g.id = m.guest_id
     WHERE m.possible_duplicate AND g.numero_documento = ANY($1)`,
    [docs]
  )
  return {
    tra: new Set(tra.map((row) => row.doc)),
    sire: new Set(sire.map((row) => `${row.doc}/${row.movement}`))
  }
}

export class InvariantViolation extends Error {}

/**
 * Invariants to leave unchecked, by id (`MODEL_IGNORE=c-warning-exit,d-tra`): only to look for further failures
 * while a known one is open. Empty by default, and CI never sets it.
 */
const IGNORED = new Set((process.env.MODEL_IGNORE ?? "").split(",").map((id) => id.trim()).filter((id) => id !== ""))

export const fail = (model: Model, invariant: string, message: string) => {
  if (IGNORED.has(invariant)) return
  throw new InvariantViolation(`invariant ${invariant} violated: ${message}\n  hotel ${model.hotel.n}, today ${model.world.today}` +
    `\n  trace:\n    ${model.trace.join("\n    ")}`)
}

/**
 * The invariants, after every step:
 * (a) each guest whose entry the fake SIRE accepted gets an accepted exit dated the departure (or check_out, or the
 *     cancellation day), once a completed run on or after that date, with SIRE up, the guest's country mapped, and
 *     after the entry's acceptance, has happened; exactly one unless the service recorded it as a possible duplicate;
 * (b) no accepted submission (TRA main/companion for one period, SIRE line per movement) is repeated unless the
 *     service recorded it as a possible duplicate;
 * (c) no report is `pending` past its due date (after a completed run later than that date) without a `warning`,
 *     nor pending at all once a run completed after its reservation was cancelled; and every live report `pending`
 *     or in `error` is in `reports list`;
 * (d) is checked by the cancel command itself (`already_reported` = the fake holds or may hold it).
 */
export const checkInvariants = async (model: Model) => {
  const { world } = model
  const facts = traFacts(model)
  const lines = sireLines(model)
  const myDocs = model.stays.flatMap((stay) => stay.guests.map((guest) => guest.doc))
  const details = await Promise.all(model.stays.map((stay) => detail(model, stay)))
  let duplicates: Awaited<ReturnType<typeof possibleDuplicates>> | undefined
  const dups = async () => (duplicates ??= await possibleDuplicates(model, myDocs))

  // (b) TRA: a registration repeated for the same guest, endpoint and period.
  const traCounts = new Map<string, number>()
  for (const fact of facts) {
    if (!fact.registered) continue
    const key = `${fact.doc} ${fact.path} ${fact.checkIn}→${fact.checkOut}`
    traCounts.set(key, (traCounts.get(key) ?? 0) + 1)
  }
  for (const [key, count] of traCounts) {
    const doc = key.split(" ")[0]!
    if (count > 1 && !(await dups()).tra.has(doc)) {
      fail(model, "b-tra", `the TRA registered ${key} ${count} times and the service recorded no possible duplicate`)
    }
  }
  // (b) SIRE: an accepted line repeated for the same guest and movement.
  const sireCounts = new Map<string, number>()
  for (const line of lines) {
    if (line.accepted) sireCounts.set(`${line.doc}/${line.movement}`, (sireCounts.get(`${line.doc}/${line.movement}`) ?? 0) + 1)
  }
  for (const [key, count] of sireCounts) {
    if (count > 1 && !(await dups()).sire.has(key)) {
      fail(model, "b-sire", `SIRE accepted ${count} ${key} lines and the service recorded no possible duplicate`)
    }
  }

  const completedRuns = model.runs.filter((run) => run.completed)
  const laterRun = (after: number, predicate: (run: RunRecord) => boolean) =>
    completedRuns.find((run) => run.epoch > after && predicate(run))

  for (const [index, stay] of model.stays.entries()) {
    const body = details[index]
    const reports = [
      { name: "tra", report: body.tra, dueFrom: stay.completedAt },
      { name: "sire", report: body.sire, dueFrom: stay.completedAt },
      { name: "sire.exit", report: body.sire?.exit, dueFrom: null as number | null }
    ]
    if (body.sire?.exit?.status === "pending" && stay.exitPendingSince === null) stay.exitPendingSince = model.epoch
    if (body.sire?.exit?.status !== "pending") stay.exitPendingSince = null
    reports[2]!.dueFrom = stay.exitPendingSince
    for (const report of reports) {
      if (report.dueFrom !== null) report.dueFrom = Math.max(report.dueFrom, stay.datesChangedAt)
    }

    // (c) pending past its due date without a warning.
    for (const { name, report, dueFrom } of reports) {
      if (report?.status !== "pending" || dueFrom === null) continue
      const sendsOn: string | null = report.sends_on ?? (name === "sire" ? dayOf(world, stay.checkIn) : null)
      if (sendsOn === null) continue
      const past = laterRun(dueFrom, (run) => dayOf(world, run.date) > sendsOn)
      if (past !== undefined && (report.warning === null || report.warning === undefined || report.warning === "")) {
        fail(model, `c-warning-${name === "sire.exit" ? "exit" : name}`, `${stay.label} ${name} is pending past its due date ${sendsOn} (run of day ${past.date}) without a warning: ${JSON.stringify(report)}`)
      }
    }
    // (c) pending at all once a run completed after the cancellation.
    if (stay.cancelledAt !== null) {
      const after = laterRun(stay.cancelledAt, () => true)
      if (after !== undefined) {
        for (const { name, report } of reports.slice(0, 2)) {
          if (report?.status === "pending") {
            fail(model, `c-cancelled-${name}`, `${stay.label} was cancelled and a run has completed since, yet ${name} is still pending: ${JSON.stringify(report)}`)
          }
        }
      }
    }

    // (a) exits follow accepted entries.
    for (const guest of stay.guests.filter((g) => g.nat !== "CO")) {
      const entries = lines.filter((line) => line.doc === guest.doc && line.movement === "E" && line.accepted)
      const exits = lines.filter((line) => line.doc === guest.doc && line.movement === "S" && line.accepted)
      if (exits.length > 0 && !stay.exitDateSeen.has(guest.doc)) {
        const expected = exitDay(stay)
        stay.exitDateSeen.set(guest.doc, expected)
        if (exits[0]!.date !== sireDate(world, expected)) {
          fail(model, "a-exit-date", `${stay.label} guest ${guest.doc}: the exit accepted is dated ${exits[0]!.date}, expected ${sireDate(world, expected)} (day ${expected})`)
        }
      }
      if (exits.length > 1 && !(await dups()).sire.has(`${guest.doc}/S`)) {
        fail(model, "a-exit-repeated", `${stay.label} guest ${guest.doc} has ${exits.length} accepted exits and no possible duplicate recorded`)
      }
      if (entries.length === 0) continue
      const expected = exitDay(stay)
      // When the service could know the entry was accepted: the run that got the fake's acceptance back; failing
      // that (the answer lost, a 503 or no answer, a killed worker), the next completed run, which learns the
      // outcome is unknown and sends the entry again. Design §6.8: the exit goes out in that run or the next.
      const completed = (epoch: number) => model.runs.some((run) => run.epoch === epoch && run.completed)
      const answered = lines.find((line) =>
        line.doc === guest.doc && line.movement === "E" && line.accepted && !line.unknown && completed(line.epoch)
      )
      const held = lines.find((line) => line.doc === guest.doc && line.movement === "E" && (line.accepted || line.unknown))
      const known = answered ?? (held === undefined ? undefined : model.runs.find((run) => run.epoch > held.epoch && run.completed))
      if (known === undefined) continue
      const owed = laterRun(Math.max(known.epoch, stay.datesChangedAt), (run) => run.date >= expected && run.sireUp && run.mapped.has(guest.nat))
      // An exit the authority refused (a definite answer) is not the service's to send again: it must say so,
      // `error` with the authority's reason, for an operator (`cli reports retry`).
      const refused = lines.some((line) => line.doc === guest.doc && line.movement === "S" && !line.accepted && !line.unknown)
      if (owed !== undefined && exits.length === 0 && refused) {
        if (body.sire?.exit?.status !== "error" || !body.sire?.exit?.warning) {
          fail(model, "a-exit-missing", `${stay.label} guest ${guest.doc} (${guest.nat}): SIRE refused its exit, yet the exit is not in error with the reason: ${JSON.stringify(body.sire)}`)
        }
        continue
      }
      // The service gives up on an exit still failing transiently 72 h past its date (design §6.9): `error`, for an
      // operator (alert, `reports list`, `reports retry`). The model's runs are dated in the past while the service's
      // clock reads today, so an exit dated three days back that meets a 503 ends there — by the service's clock,
      // rightly.
      const gaveUp = body.sire?.exit?.status === "error" &&
        String(body.sire?.exit?.warning ?? "").startsWith("no answer for 72 hours past the due date")
      if (owed !== undefined && exits.length === 0 && gaveUp) continue
      if (owed !== undefined && exits.length === 0) {
        fail(model, "a-exit-missing", `${stay.label} guest ${guest.doc} (${guest.nat}): its entry was accepted (run ${entries[0]!.epoch}) and the run of day ${owed.date} (run ${owed.epoch}, SIRE up, country mapped) is on or after its exit day ${expected}, yet SIRE has no accepted exit; sire = ${JSON.stringify(body.sire)}`)
      }
    }
  }

  // (c) every live report that needs someone is listed.
  const listed = await admin(world.app, (c) => c.ListReports({ property_id: model.hotel.propertyId, limit: 1000 } as any)) as any
  const seen = new Set<string>((listed.reports as Array<any>).map((row) => `${row.external_id} ${row.authority}`))
  for (const [index, stay] of model.stays.entries()) {
    const body = details[index]
    for (const [authority, report] of [["tra", body.tra], ["sire_entry", body.sire], ["sire_exit", body.sire?.exit]] as const) {
      if ((report?.status === "pending" || report?.status === "error") && !seen.has(`${stay.externalId} ${authority}`)) {
        fail(model, "c-listed", `${stay.label} ${authority} is ${report.status} but reports list does not show it: ${JSON.stringify(report)}`)
      }
    }
  }
}
