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

export const foreigner = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  tipo_documento: "Pasaporte",
  numero_documento: "AB123456",
  nombre: "John",
  apellido: "Smith",
  nacionalidad: "US",
  fecha_nacimiento: "1985-04-12",
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
