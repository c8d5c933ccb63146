/**
 * The rules for a console request: `command` a non-empty string a process can be given (no NUL, at most 64 KiB:
 * Linux refuses a longer single argument anyway), `cwd` absent or such a string too. Whether `cwd` stays inside the
 * workspace only the engine can tell (symlinks); it refuses it otherwise.
 */
import { Result } from "effect"
import { InvalidCommand } from "./Errors.ts"

export const maxCommandBytes = 64 * 1024
export const maxCwdBytes = 4096

const byteLength = (text: string) => new TextEncoder().encode(text).length

const argument = (value: unknown, name: string, maxBytes: number): Result.Result<string, InvalidCommand> =>
  typeof value !== "string" || value.trim() === ""
    ? Result.fail(new InvalidCommand({ reason: `${name} must be a non-empty string` }))
    : value.includes("\0")
    ? Result.fail(new InvalidCommand({ reason: `${name} contains a NUL character` }))
    : byteLength(value) > maxBytes
    ? Result.fail(new InvalidCommand({ reason: `${name} is longer than ${maxBytes} bytes` }))
    : Result.succeed(value)

export interface ConsoleRequest {
  readonly command: string
  readonly cwd?: string
}

export const validateRequest = (input: { readonly command: unknown; readonly cwd: unknown }): Result.Result<ConsoleRequest, InvalidCommand> =>
  Result.flatMap(argument(input.command, "command", maxCommandBytes), (command) =>
    input.cwd === undefined || input.cwd === null
      ? Result.succeed({ command })
      : Result.map(argument(input.cwd, "cwd", maxCwdBytes), (cwd) => ({ command, cwd })))
