/** The documented rules on skills: their names, and how many an agent may hold. */
import { Result } from "effect"
import { ValidationFailed } from "../ValidationFailed.ts"

/** Skills attached to one agent (service interface, section 8). */
export const MaxPerAgent = 10

/** A skill's name becomes a folder name in the agent's workspace: letters, digits, `-` and `_` only. */
export const validateName = (name: unknown): Result.Result<string, ValidationFailed> =>
  typeof name !== "string" || name.length === 0
    ? Result.fail(new ValidationFailed({ detail: "SKILL.md front matter needs a name" }))
    : name.length > 64
    ? Result.fail(new ValidationFailed({ detail: "skill name must be at most 64 characters" }))
    : /^[A-Za-z0-9_-]+$/.test(name)
    ? Result.succeed(name)
    : Result.fail(new ValidationFailed({ detail: `skill name "${name}" may only contain letters, digits, - and _` }))

export const tooMany = () => new ValidationFailed({ detail: `skills exceeds maximum of ${MaxPerAgent}` })
