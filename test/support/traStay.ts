import type { TraGuest, TraStay } from "../../src/compliance/Tra.ts"

/**
 * One stay and its two guests (a Colombian holder, a foreign companion) as the TRA body builders take them: the
 * example the body and client tests share.
 */
export const traStay: TraStay = {
  check_in: "2026-11-21",
  check_out: "2026-11-24",
  numero_habitacion: "304",
  motivo: "Vacaciones, recreo y ocio",
  tipo_acomodacion: "Doble",
  costo: "1250000",
  nombre_establecimiento: "Hotel Casa Bahía",
  rnt_establecimiento: "123456"
}

export const traHolder: TraGuest = {
  tipo_identificacion: "C.C",
  numero_identificacion: "1020304050",
  nombres: "Ana María",
  apellidos: "Pérez Gómez",
  cuidad_residencia: "Medellín",
  cuidad_procedencia: "Bogotá"
}

export const traCompanion: TraGuest = {
  tipo_identificacion: "Pasaporte",
  numero_identificacion: "X1234567",
  nombres: "John",
  apellidos: "Smith",
  cuidad_residencia: "Estados Unidos",
  cuidad_procedencia: "Miami"
}
