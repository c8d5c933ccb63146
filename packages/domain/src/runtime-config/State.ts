/** An agent's config record as its history leaves it: the hash of the last version written through Cairn, and how many writes. */
export interface RuntimeConfigState {
  readonly lastHash: string | undefined
  readonly writes: number
}

export const initial: RuntimeConfigState = { lastHash: undefined, writes: 0 }
