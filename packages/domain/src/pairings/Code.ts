/**
 * What a pairing code may be. OpenClaw's are 8 characters of `A–Z` (without I and O) and `2–9`, and it compares
 * them without regard to case (its `src/pairing/pairing-store.ts`). Cairn takes letters and digits only, 4 to 16 of
 * them, upper-cased, so a code it passes to the engine can never carry anything but a code.
 */
import { Result } from "effect"
import { ValidationFailed } from "../ValidationFailed.ts"

const codePattern = /^[A-Za-z0-9]{4,16}$/

/** The code as the engine compares it (upper case), or 400 `Validation failed: …`. */
export const requirePairingCode = (code: string): Result.Result<string, ValidationFailed> =>
  codePattern.test(code)
    ? Result.succeed(code.toUpperCase())
    : Result.fail(new ValidationFailed({ detail: "code must be the pairing code the channel sent (4 to 16 letters or digits)" }))
