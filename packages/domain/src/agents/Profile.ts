/**
 * What an agent shows of itself besides its name (Pinata's agent fields): a description, a vibe (its manner, in a
 * few words) and an emoji. Each optional; `null` clears it in a change. Plain text: no control characters.
 */
import { Result } from "effect"
import { ValidationFailed } from "../ValidationFailed.ts"

export interface Profile {
  readonly description?: string | null
  readonly vibe?: string | null
  readonly emoji?: string | null
}

/** The longest each may be, in characters (code points). */
export const profileLimits = { description: 500, vibe: 100, emoji: 16 } as const

const controlCharacter = /[\u0000-\u0008\u000b-\u001f\u007f]/

const field = (name: keyof Profile, value: unknown): Result.Result<string | null | undefined, ValidationFailed> => {
  if (value === undefined || value === null) return Result.succeed(value)
  if (typeof value !== "string") return Result.fail(new ValidationFailed({ detail: `${name} must be a string or null` }))
  const trimmed = value.trim()
  if ([...trimmed].length > profileLimits[name]) {
    return Result.fail(new ValidationFailed({ detail: `${name} must be at most ${profileLimits[name]} characters` }))
  }
  if (controlCharacter.test(trimmed)) return Result.fail(new ValidationFailed({ detail: `${name} contains a control character` }))
  // An empty value is no value.
  return Result.succeed(trimmed === "" ? null : trimmed)
}

/** Checks the fields given (absent ones stay absent). */
export const validateProfile = (input: { readonly description?: unknown; readonly vibe?: unknown; readonly emoji?: unknown }): Result.Result<Profile, ValidationFailed> =>
  Result.flatMap(field("description", input.description), (description) =>
    Result.flatMap(field("vibe", input.vibe), (vibe) =>
      Result.map(field("emoji", input.emoji), (emoji): Profile => ({
        ...(description === undefined ? {} : { description }),
        ...(vibe === undefined ? {} : { vibe }),
        ...(emoji === undefined ? {} : { emoji })
      }))))
