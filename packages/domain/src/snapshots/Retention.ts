/**
 * Which kept snapshots expire once one more is taken: the newest `keep` manual and automatic ones stay, and every
 * pre-reset snapshot besides (each is the undo of a reset, and taking one must never push out the snapshot the reset
 * is going to). The rest go, oldest first. Pure.
 */
import type { KeptSnapshot } from "./State.ts"

export const expiring = (kept: ReadonlyArray<KeptSnapshot>, keep: number): ReadonlyArray<KeptSnapshot> => {
  const regular = kept.filter((snapshot) => snapshot.trigger !== "pre-reset")
  return regular.slice(0, Math.max(0, regular.length - Math.max(0, keep)))
}
