/**
 * Which kept snapshots expire once one more is taken: the newest `keep` stay, and so does every pre-reset snapshot
 * (each is the undo of a reset); the rest go, oldest first. Pure.
 */
import type { KeptSnapshot } from "./State.ts"

export const expiring = (kept: ReadonlyArray<KeptSnapshot>, keep: number): ReadonlyArray<KeptSnapshot> => {
  const newestFirst = [...kept].reverse()
  return newestFirst.slice(Math.max(0, keep)).filter((snapshot) => snapshot.trigger !== "pre-reset").reverse()
}
