/** Removing a test's data directory where agents had filesystems of their own (AgentDisks.ts). */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import { mountedAt } from "../AgentDisks.ts"

/**
 * Unmounts what is mounted under `dir` (agents' homes a killed Cairn left mounted, deepest first), then removes it.
 * A plain `rmSync` would stop at a mounted home (EBUSY) and leave its loop device attached.
 */
export const removeDataDir = (dir: string) => {
  const real = Fs.existsSync(dir) ? Fs.realpathSync(dir) : dir
  const points = [...mountedAt().keys()].filter((point) => point.startsWith(`${real}/`)).sort((a, b) => b.length - a.length)
  for (const point of points) spawnSync("umount", [point], { stdio: "ignore" })
  Fs.rmSync(dir, { recursive: true, force: true })
}
