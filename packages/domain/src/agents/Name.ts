/** The documented rules for an agent's name: required, at most 100 characters, no banned characters. */
import { Result } from "effect"
import { ValidationFailed } from "../ValidationFailed.ts"

// Control characters, markup and path separators have no place in a display name.
const banned = /[<>{}\\/`$\u0000-\u001f\u007f]/

export const validateName = (name: unknown): Result.Result<string, ValidationFailed> => {
  if (typeof name !== "string" || name.trim() === "") return Result.fail(new ValidationFailed({ detail: "name is required" }))
  if ([...name].length > 100) return Result.fail(new ValidationFailed({ detail: "name must be at most 100 characters" }))
  const found = banned.exec(name)
  if (found) return Result.fail(new ValidationFailed({ detail: `name contains a banned character (${JSON.stringify(found[0])})` }))
  return Result.succeed(name.trim())
}
