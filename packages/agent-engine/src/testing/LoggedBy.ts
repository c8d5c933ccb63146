/**
 * What a piece of engine work logs, kept for the test to check instead of printed: tests provoke warnings on
 * purpose (a registry out of reach, a variable refused), and printed they would bury real failures in the output.
 */
import { Effect, Logger } from "effect"

/** Runs `effect` with its log lines kept, and gives back its value and those lines' messages. */
export const withLogs = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => {
    const messages: Array<string> = []
    const keep = Logger.make(({ message }) => {
      messages.push((Array.isArray(message) ? message : [message]).map(String).join(" "))
    })
    return effect.pipe(Effect.provide(Logger.layer([keep])), Effect.map((value) => ({ value, messages })))
  })

/** Runs `effect` with its log lines kept, and gives back those lines' messages. */
export const loggedBy = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.map(withLogs(effect), ({ messages }) => messages)
