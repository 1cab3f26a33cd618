/**
 * MinCIT's TRA web service for PMS providers as the public integrations write it, for the fake TRA
 * (`../fakeTra.ts`). Written down here from the sources, never imported from `src/`: a field or label our own code
 * gets wrong must be caught by the fake, not copied into it. Tags are those of
 * `../shared/domain/colombia-reporting.md` §0; the files named are the ones read (2026-11).
 *
 * - C1 franidos/releaseHottely SistemaVenta.AplicacionWeb/Controllers/BookingController.cs
 * - C2 kiriku22/agendAqui backend/src/services/TRAService.js @ e6a61969868a4d34e523ad4d86c44a96b80997bc
 *   (construirPayloadPrincipal, construirPayloadSecundario, mapearTipoDocumento: "según el manual")
 * - C3 steadydee/owagents tools/hotel_pms/server.py @ a43c14ba864bcec9e7d4d1f62f747d3c2679db8d
 *   (build_tra_api_guest_payload: "The official TRA PMS manual intentionally spells these API keys as cuidad_*";
 *   tra_document_type)
 * - C4 BreynerTejada/housetel backend/apps/compliance/services/tra.py and codes.py
 *   @ 3cda8133050bf81d6573ffc077cadd98364029a2 (TRA_DOCUMENT_TYPES; its own required-field check)
 * - C5 franbz1/hotel-san-miguel src/TRA/dto/huespedPrincipalTraDto.ts,
 *   src/common/factories/dto_Factory/dtos/huespedPrincipalTraDtoFactory.ts @ 7c4bbe95ae4f692efde6f5589279e49d1d12751d
 * - C8 a TypeScript TRA body builder (repository not identified; index id 70505909272): cuerpoPrincipal,
 *   cuerpoAcompanante, loQueFalta (the fields it refuses to send empty)
 */

/** The seven fields `/one/` and `/two/` both open with, in that order: the guest, then the room. */
const GUEST_AND_ROOM_FIELDS: ReadonlyArray<string> = [
  "tipo_identificacion",
  "numero_identificacion",
  "nombres",
  "apellidos",
  "cuidad_residencia",
  "cuidad_procedencia",
  "numero_habitacion"
]

/**
 * `POST /one/`: the 15 fields every source sends for the main guest (C1–C5, C7–C9 agree on the set), with the
 * service's own misspelling `cuidad_` (C2: "typo intencional de la API"; C3 above). A body with `ciudad_…`
 * sends a field the service does not have and leaves `cuidad_…` missing.
 */
export const ONE_FIELDS: ReadonlyArray<string> = [
  ...GUEST_AND_ROOM_FIELDS,
  "motivo",
  "numero_acompanantes",
  "check_in",
  "check_out",
  "tipo_acomodacion",
  "costo",
  "nombre_establecimiento",
  "rnt_establecimiento"
]

/** `POST /two/`: the 10 fields of a companion (C1–C5, C7, C8 agree); `padre` is the code `/one/` answered. */
export const TWO_FIELDS: ReadonlyArray<string> = [
  ...GUEST_AND_ROOM_FIELDS,
  "check_in",
  "check_out",
  "padre"
]

/**
 * Fields that may not be blank: those that every source which checks a body before sending it refuses to send
 * empty — C3 (every field), C4 (document, names, cuidad_residencia, numero_habitacion, RNT) and C8 (names,
 * document, cuidad_residencia, cuidad_procedencia, RNT, costo). `apellidos` is required by C3 and C4 (C8 sends ""
 * when it has none) and `numero_habitacion` by C3 and C4 but not C8, which sends it as it comes: the authority's
 * real list is a gap (notes §1.3), so a field only some sources require stays optional here.
 */
export const NOT_BLANK: ReadonlySet<string> = new Set([
  "tipo_identificacion",
  "numero_identificacion",
  "nombres",
  "cuidad_residencia",
  "rnt_establecimiento"
])

/**
 * Strings of digits. `numero_acompanantes` and `costo`: "String según API" (C2), C3, C5, C8; `rnt_establecimiento`
 * (notes §4.3, P3: 1–20 digits); `padre`: the integer code of `/one/` (C1, C3, C4, C5 send it as text).
 */
export const DIGITS: ReadonlySet<string> = new Set(["numero_acompanantes", "costo", "rnt_establecimiento", "padre"])

/** `YYYY-MM-DD`: C1 (`yyyy-MM-dd`), C2 (`formatearFecha`), C3, C4, C9. */
export const DATE_FIELDS: ReadonlySet<string> = new Set(["check_in", "check_out"])

/**
 * Spec `tipo_documento` → the one `tipo_identificacion` label accepted for it: the label `docs/compliance.md` cites
 * ("TRA document labels"), never the union of what the sources send (issue 23 item 6).
 * - Pasaporte, C.C, C.E: C2 ("según el manual"), C3 (also the web form's select), C5's TRA factory and C8 agree.
 * - T.I: C2 and C8. R.C: C8 alone ("el ministerio tiene sus propias siglas: R.C para el registro civil").
 * - D.E (a Mercosur or CAN identity card): "D.N.I", C3 (the web form's select) and C5; not C8's "Pasaporte",
 *   which would declare a document the guest did not show, nor C4's undotted "DE".
 * - C.D: no source has a label for a carné diplomático; "Otro" is what C2 and C5 send for a document outside
 *   their list.
 * - PPT: "PPT", C4 (C5 sends it as "Otro").
 * C4's other undotted labels (CC, CE, TI, PA) and the labels of documents the spec does not have (P.E.P, PEP,
 * NIT) are no document's label here, so the fake refuses them.
 */
export const DOCUMENT_LABEL: Readonly<Record<string, string>> = {
  "Pasaporte": "Pasaporte",
  "C.C": "C.C",
  "T.I": "T.I",
  "R.C": "R.C",
  "C.E": "C.E",
  "D.E": "D.N.I",
  "C.D": "Otro",
  "PPT": "PPT"
}
