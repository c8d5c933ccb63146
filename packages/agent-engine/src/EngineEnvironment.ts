/**
 * Which of the variables given to `AgentEngine.setEnvironment` an adapter may hand to a gateway. Both adapters apply
 * the same rule, so they agree on what a gateway sees. A name must be a plain environment variable name, outside the
 * names the engine sets or steers itself by (`HOME`, `PATH`, `OPENCLAW_*`, `CLAWHUB_*`, `CAIRN_*`: a variable like
 * `OPENCLAW_STATE_DIR` would move the agent's state out of its home even though the engine never sets it). A value
 * must hold no NUL byte: no process environment can, and Node's refusal to spawn would quote the value in its error.
 * The domain refuses such secrets already (the name rules are the domain's); this is the engine's own line of defence.
 */
import { Secret } from "@cairn/domain"
import { Redacted } from "effect"

export interface Admitted {
  /** The variables a gateway may get. */
  readonly variables: Readonly<Record<string, Redacted.Redacted<string>>>
  /** The names left out, for a warning; never their values. */
  readonly refused: ReadonlyArray<string>
}

/** Splits an environment into what a gateway may get and the names left out. */
export const admit = (environment: Readonly<Record<string, Redacted.Redacted<string>>>): Admitted => {
  const variables: Record<string, Redacted.Redacted<string>> = {}
  const refused: Array<string> = []
  for (const [name, value] of Object.entries(environment)) {
    if (Secret.isVariableName(name) && !Secret.isReservedName(name) && !Redacted.value(value).includes("\0")) variables[name] = value
    else refused.push(name)
  }
  return { variables, refused }
}

/** The plain values, for the moment they are handed to a process. */
export const reveal = (variables: Readonly<Record<string, Redacted.Redacted<string>>>): Record<string, string> =>
  Object.fromEntries(Object.entries(variables).map(([name, value]) => [name, Redacted.value(value)]))

/** The warning an adapter logs when it leaves variables out: names only, JSON-quoted since they may be odd. */
export const refusedWarning = (agentId: string, refused: ReadonlyArray<string>) =>
  `Agent ${agentId}: left out of the gateway's environment (not a plain name, reserved for the engine, or a value ` +
  `with a NUL byte): ${refused.map((name) => JSON.stringify(name)).join(", ")}`
