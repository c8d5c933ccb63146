/**
 * The application's log in tests: kept in memory, not printed. Tests provoke failures on purpose (an engine down, a
 * store out of reach, a gateway that crashes), and the server logs each with its cause, stack trace included, as it
 * must in production; printed, those lines would bury a real failure in `npm test`'s output. Nothing is muted for
 * someone who needs it: a test that fails gets the lines logged since it started printed with its report, `lines()`
 * lets a test assert on what was logged, and `TEST_LOGS=print` prints every line as it is logged.
 */
import { Array as Arr, Cause, Formatter, Logger } from "effect"
import { beforeEach } from "vitest"

const captured: Array<string> = []
let printAll = process.env["TEST_LOGS"] === "print"

const render = (value: unknown) => typeof value === "string" ? value : Formatter.format(value, { space: 2 })

const logger = Logger.make(({ cause, date, logLevel, message }) => {
  const parts = [date.toISOString(), logLevel.toUpperCase(), ...Arr.ensure(message).map(render)]
  if (cause.reasons.length > 0) parts.push(Cause.pretty(cause))
  const line = parts.join(" ")
  if (printAll) console.log(line)
  else captured.push(line)
})

/** Every logger of the layers it is provided to replaced by the capture. */
export const layer = Logger.layer([logger])

/** What was logged since the current test started. */
export const lines = (): ReadonlyArray<string> => captured

// Each test starts with an empty log and, should it fail, shows the log it made. Outside vitest (a script, another
// test runner) there is no test to attach the log to, so it is printed as it comes.
try {
  beforeEach((context) => {
    captured.length = 0
    context.onTestFailed(() => {
      if (captured.length > 0) console.log(`What the application logged during this test:\n${captured.join("\n")}`)
    })
  })
} catch {
  printAll = true
}
