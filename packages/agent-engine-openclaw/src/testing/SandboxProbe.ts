/**
 * Whether bubblewrap can make a sandbox on this machine, for tests: the isolation tests run only where it can (CI
 * installs it), and the stand-in engine's tests run their agents unsandboxed where it cannot, so that `npm test`
 * passes on a machine with only Node and npm.
 */
import { spawnSync } from "node:child_process"

const probe = spawnSync("bwrap", ["--unshare-user", "--unshare-pid", "--ro-bind", "/", "/", "--proc", "/proc", "--", "true"], {
  encoding: "utf8"
})

export const bwrapRuns = probe.status === 0

/** Why the sandbox cannot run here (empty when it can). */
export const sandboxSkipReason = bwrapRuns
  ? ""
  : probe.error !== undefined
  ? `bubblewrap is not installed (${probe.error.message})`
  : `bubblewrap cannot make a sandbox here: ${probe.stderr.trim()}`

/** The sandbox mode for engines in tests that are not about isolation: on where it can run, off elsewhere. */
export const sandboxModeForTests = bwrapRuns ? "auto" as const : "off" as const
