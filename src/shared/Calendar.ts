import { DateTime, Effect } from "effect"

/**
 * Calendar days as the service counts them: `YYYY-MM-DD` strings in Bogotá time. Every date rule (report due
 * dates, photo retention, "today") goes through here, on effect's `DateTime`, rather than each module doing its
 * own `Date` arithmetic.
 */

/** America/Bogota: UTC−5 all year, no daylight saving (design §2), so a fixed offset is exact. */
export const bogotaZone = DateTime.zoneMakeOffset(-5 * 60 * 60 * 1000)

/** The calendar date in Bogotá, `YYYY-MM-DD`, at an instant. */
export const dateInBogota = (instant: Date | DateTime.Utc): string =>
  DateTime.formatIsoDate(DateTime.setZone(instant instanceof Date ? DateTime.unsafeFromDate(instant) : instant, bogotaZone))

/** Today's calendar date in Bogotá, `YYYY-MM-DD`, from `Clock` (so `TestClock` drives it). */
export const todayInBogota: Effect.Effect<string> = Effect.map(DateTime.now, dateInBogota)

/**
 * The calendar date `days` after `date` (before it when negative), both `YYYY-MM-DD`; `date` is a stored or
 * validated date. Counted on the UTC calendar, where every day has 24 hours, so no zone shift can skip a day.
 */
export const addDays = (date: string, days: number): string =>
  DateTime.formatIsoDate(DateTime.add(DateTime.unsafeMake(`${date}T00:00:00Z`), { days }))

/** The instant `date` (`YYYY-MM-DD`) begins in Bogotá: 00:00 UTC−5, i.e. 05:00Z of that date. */
export const startOfDayInBogota = (date: string): Date =>
  DateTime.toDateUtc(DateTime.unsafeMakeZoned(`${date}T00:00:00`, { timeZone: bogotaZone, adjustForTimeZone: true }))
