/**
 * The rules for what a user may store: a name an environment variable can have (`[A-Za-z_][A-Za-z0-9_]*`, at most
 * 128 characters) and a value of 1 byte to 64 KiB. Names the engine sets itself (`HOME`, `PATH`, `OPENCLAW_*`,
 * `CLAWHUB_*`, `CAIRN_*`) are refused: the gateway would never see them. Failures are 400 `Validation failed:
 * <detail>`; the detail never quotes the value.
 */
import { Redacted, Result } from "effect"
import { ValidationFailed } from "../ValidationFailed.ts"

export const maxNameLength = 128
export const maxValueBytes = 64 * 1024
const envName = /^[A-Za-z_][A-Za-z0-9_]*$/
const reserved = /^(?:HOME|PATH|(?:OPENCLAW|CLAWHUB|CAIRN)_.*)$/

/** Whether `name` can be an environment variable's name. */
export const isVariableName = (name: string) => envName.test(name)

/** Whether a variable named `name` is one the engine sets or steers itself by, so no secret may take it. */
export const isReservedName = (name: string) => reserved.test(name)

export const validateName = (name: unknown): Result.Result<string, ValidationFailed> => {
  if (typeof name !== "string" || name === "") return Result.fail(new ValidationFailed({ detail: "name is required" }))
  if (name.length > maxNameLength) return Result.fail(new ValidationFailed({ detail: `name must be at most ${maxNameLength} characters` }))
  if (!isVariableName(name)) {
    return Result.fail(new ValidationFailed({ detail: "name must be an environment variable name: letters, digits and _, not starting with a digit" }))
  }
  if (isReservedName(name)) return Result.fail(new ValidationFailed({ detail: `name ${name} is reserved for the engine` }))
  return Result.succeed(name)
}

/** The value, wrapped in `Redacted` from here on (it never prints, logs or serialises). */
export const validateValue = (value: unknown): Result.Result<Redacted.Redacted<string>, ValidationFailed> => {
  if (typeof value !== "string" || value === "") return Result.fail(new ValidationFailed({ detail: "value is required" }))
  // No process environment can hold a NUL byte.
  if (value.includes("\0")) return Result.fail(new ValidationFailed({ detail: "value must not contain a NUL character" }))
  if (new TextEncoder().encode(value).length > maxValueBytes) {
    return Result.fail(new ValidationFailed({ detail: `value must be at most ${maxValueBytes} bytes` }))
  }
  return Result.succeed(Redacted.make(value))
}
