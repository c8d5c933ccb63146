/**
 * Runs the CLI as an operator would where no server runs (CAIRN_URL points nowhere), in `root`'s data directory,
 * without the test run's DATABASE_URL: what `cairn engine …` sees on a machine being set up. So CI's PostgreSQL pass
 * would only repeat these runs exactly (an engine's download included): their tests run in the embedded pass only.
 */
import { spawnSync } from "node:child_process"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const main = fileURLToPath(new URL("../src/main.ts", import.meta.url))

export const serverlessCli = (root: string) => (env: Record<string, string>, ...args: Array<string>) => {
  const { DATABASE_URL: _, ...inherited } = process.env
  const result = spawnSync(process.execPath, [main, ...args], {
    env: { ...inherited, CAIRN_URL: "http://127.0.0.1:9", DATA_DIR: Path.join(root, "data"), ...env },
    encoding: "utf8",
    timeout: 15 * 60_000
  })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}
