/**
 * The rules for a group's name: required (not blank), at most 255 characters, no control characters. Pinata
 * documents no limit; 255 is its files' name column's, and keeps a name readable in a listing.
 */
import { Result } from "effect"
import { ValidationFailed } from "../ValidationFailed.ts"

export const maxNameLength = 255

const control = /[\u0000-\u001f\u007f]/

export const validateName = (name: string): Result.Result<string, ValidationFailed> => {
  if (name.trim() === "") return Result.fail(new ValidationFailed({ detail: "name must not be blank" }))
  if ([...name].length > maxNameLength) return Result.fail(new ValidationFailed({ detail: `name must be at most ${maxNameLength} characters` }))
  if (control.test(name)) return Result.fail(new ValidationFailed({ detail: "name must not contain control characters" }))
  return Result.succeed(name)
}
