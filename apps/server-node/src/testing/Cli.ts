/** Runs the admin CLI against a running server, as an operator would, and returns its last line. */
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"

const main = fileURLToPath(new URL("../../../cli/src/main.ts", import.meta.url))

export const cli = (env: { readonly url: string; readonly dataDir: string }, ...args: Array<string>) => {
  const result = spawnSync(process.execPath, [main, ...args], {
    env: { ...process.env, CAIRN_URL: env.url, DATA_DIR: env.dataDir },
    encoding: "utf8"
  })
  if (result.status !== 0) throw new Error(`cairn ${args.join(" ")} failed (${result.status}):\n${result.stderr}${result.stdout}`)
  return result.stdout.trim().split("\n").at(-1)!
}

export const cliResult = (env: { readonly url: string; readonly dataDir: string }, ...args: Array<string>) =>
  spawnSync(process.execPath, [main, ...args], { env: { ...process.env, CAIRN_URL: env.url, DATA_DIR: env.dataDir }, encoding: "utf8" })
