/**
 * What a database error means for the client, from its SQLSTATE (Postgres and PGlite both carry one as `code`,
 * somewhere down the cause chain of the port's error): a data exception (class 22: a NUL byte or an invalid
 * escape in text, a value out of range) is bad input, 400; a connection, resource or shutdown failure is an outage,
 * 503; anything else (a constraint, a syntax error) is a bug, 500, never reported as an outage.
 */
export type DatabaseFailure = "bad-input" | "unavailable" | "bug"

const sqlState = /^[0-9A-Z]{5}$/

/** The first SQLSTATE found following `cause` links (at most a few levels: errors wrap errors). */
export const sqlStateOf = (error: unknown): string | undefined => {
  let current: unknown = error
  for (let depth = 0; depth < 8 && typeof current === "object" && current !== null; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === "string" && sqlState.test(code)) return code
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

// 08 connection exception, 53 insufficient resources, 57 operator intervention (shutdown, cannot connect now),
// 58 system error, 40 transaction rollback (serialization failure, deadlock: transient).
const outageClasses = new Set(["08", "53", "57", "58", "40"])

/** How to answer a failure whose cause chain holds a SQLSTATE; undefined when it holds none. */
export const classify = (error: unknown): DatabaseFailure | undefined => {
  const state = sqlStateOf(error)
  if (state === undefined) return undefined
  const errorClass = state.slice(0, 2)
  if (errorClass === "22") return "bad-input"
  return outageClasses.has(errorClass) ? "unavailable" : "bug"
}
