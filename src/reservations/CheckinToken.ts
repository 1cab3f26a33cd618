import { randomBytes } from "node:crypto"

/** The token behind `checkin_url`: 192 random bits, URL-safe (design §5 asks for ≥ 128). */
export const newCheckinToken = () => randomBytes(24).toString("base64url")
