/** Per-minute limits of every key of one account (design §4 `accounts limits`). */
export interface KeyLimits {
  readonly reads: number
  readonly writes: number
  readonly tests: number
}
