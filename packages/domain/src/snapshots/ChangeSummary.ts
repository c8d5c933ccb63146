/**
 * What changed between two snapshots, from their files: a path (file or symlink) only in the new one is added,
 * in both with a different CID modified, only in the old one deleted; `bytesAdded` is the size of the added and
 * modified files (what a new snapshot holds that the previous did not). Directories are not counted. Pure.
 */
import type { ChangeSummary } from "./Events.ts"

export interface SnapshotFile {
  readonly cid: string
  readonly size: number
}

export const changeSummary = (
  previous: ReadonlyMap<string, SnapshotFile>,
  next: ReadonlyMap<string, SnapshotFile>
): ChangeSummary => {
  let added = 0
  let modified = 0
  let bytesAdded = 0
  for (const [path, file] of next) {
    const before = previous.get(path)
    if (before === undefined) added++
    else if (before.cid !== file.cid) modified++
    else continue
    bytesAdded += file.size
  }
  let deleted = 0
  for (const path of previous.keys()) if (!next.has(path)) deleted++
  return { added, modified, deleted, bytesAdded }
}
