/** GuestInput bodies for endpoint-7 tests: a Colombian (C.C) and a foreigner (passport, every optional field). */
export const colombian = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  tipo_documento: "C.C",
  numero_documento: "1020304050",
  nombre: "Ana",
  apellido: "Pérez Gómez",
  nacionalidad: "CO",
  pais_procedencia: "CO",
  ciudad_procedencia: "Medellín",
  pais_residencia: "CO",
  ciudad_residencia: "Medellín",
  ...overrides
})

/** Who the foreign guest of the fixtures is (a US passport holder), wherever a test writes him down. */
export const JOHN_SMITH = {
  tipo_documento: "Pasaporte",
  numero_documento: "AB123456",
  nombre: "John",
  apellido: "Smith",
  nacionalidad: "US",
  fecha_nacimiento: "1985-04-12"
} as const

export const foreigner = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  ...JOHN_SMITH,
  pais_procedencia: "US",
  ciudad_procedencia: "Miami",
  pais_residencia: "US",
  ciudad_residencia: "Miami",
  email: "john@example.com",
  phone: "+1 305 555 0100",
  address: "1 Ocean Dr",
  doc_photo_front_url: "https://photos.example.com/front.jpg",
  doc_photo_back_url: "https://photos.example.com/back.jpg",
  ...overrides
})

let sequence = 0
/** A unique external_id for a test reservation. */
export const externalId = (prefix = "T") => `${prefix}-${Date.now().toString(36)}-${++sequence}`

/** An endpoint-3 body (CreateReservation) on `propertyId`: three nights, two guests. */
export const reservationBody = (propertyId: string, overrides: Record<string, unknown> = {}) => ({
  external_id: externalId("R"),
  property_id: propertyId,
  check_in: "2026-12-20",
  check_out: "2026-12-23",
  guest_name: "Ana Pérez",
  guests_count: 2,
  ...overrides
})

/** An endpoint-7 body (SubmitRegistration) on `propertyId` with `guests` (guests_count follows them). */
export const registrationBody = (
  propertyId: string,
  guests: ReadonlyArray<Record<string, unknown>>,
  overrides: Record<string, unknown> = {}
) => ({
  ...reservationBody(propertyId, { external_id: externalId("G"), guests_count: guests.length }),
  motivo: "Vacaciones, recreo y ocio",
  tipo_acomodacion: "Habitación",
  guests,
  ...overrides
})
