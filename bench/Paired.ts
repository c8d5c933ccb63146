/**
 * Paired measurement for the benchmarks: the measured workload and its baselines run in rounds of small blocks
 * (the order of the sides rotates from round to round), so load that comes and goes on the machine falls on all
 * of them alike, and each round gives one ratio per baseline. A benchmark prints the min / median / max of those
 * ratios rather than one ratio of two long runs, which noise can invert.
 */
import { Effect } from "effect"

export interface Spread {
  readonly min: number
  readonly median: number
  readonly max: number
}

export interface Paired<B extends string> {
  /** Measured throughput over each baseline's, per round (higher is better for the measured side). */
  readonly ratios: Record<B, Spread>
  /** Operations per second over all rounds, for the measured side and each baseline. */
  readonly rates: Record<B | "measured", number>
}

export const spread = (values: ReadonlyArray<number>): Spread => {
  const s = [...values].sort((a, b) => a - b)
  return { min: s[0]!, median: s[Math.floor(s.length / 2)]!, max: s[s.length - 1]! }
}

export const show = (r: Spread) => `${r.median.toFixed(2)}x (${r.min.toFixed(2)}–${r.max.toFixed(2)})`

/** What one block did: how many operations, in how many milliseconds. */
export interface Block {
  readonly operations: number
  readonly milliseconds: number
}

/**
 * Runs `rounds` rounds; in each, every side runs one block (`block(round)`), in an order that rotates, and each
 * baseline's ratio for the round is the measured block's rate over the baseline block's. A block times itself, so
 * it can leave out what is not the operations measured (a load generator's connecting, an agent's deletion).
 */
export const rounds = <B extends string, E1, R1, E2, R2>(options: {
  readonly rounds: number
  readonly measured: (round: number) => Effect.Effect<Block, E1, R1>
  readonly baselines: Record<B, (round: number) => Effect.Effect<Block, E2, R2>>
}): Effect.Effect<Paired<B>, E1 | E2, R1 | R2> =>
  Effect.gen(function*() {
    const names = Object.keys(options.baselines) as Array<B>
    const sides: Array<B | "measured"> = ["measured", ...names]
    const totals = Object.fromEntries(sides.map((side) => [side, { operations: 0, milliseconds: 0 }])) as Record<B | "measured", { operations: number; milliseconds: number }>
    const perRound = Object.fromEntries(names.map((name) => [name, [] as Array<number>])) as Record<B, Array<number>>
    for (let round = 0; round < options.rounds; round++) {
      const rates = {} as Record<B | "measured", number>
      for (let k = 0; k < sides.length; k++) {
        const side = sides[(round + k) % sides.length]!
        const block = side === "measured" ? yield* options.measured(round) : yield* options.baselines[side as B](round)
        rates[side] = block.operations / block.milliseconds
        totals[side].operations += block.operations
        totals[side].milliseconds += block.milliseconds
      }
      for (const name of names) perRound[name].push(rates.measured / rates[name])
    }
    return {
      ratios: Object.fromEntries(names.map((name) => [name, spread(perRound[name])])) as Record<B, Spread>,
      rates: Object.fromEntries(sides.map((side) => [side, Math.round((totals[side].operations / totals[side].milliseconds) * 1000)])) as Record<B | "measured", number>
    }
  })

/** Times `work` as one block of `operations`. */
export const timed = <E, R>(operations: number, work: Effect.Effect<unknown, E, R>): Effect.Effect<Block, E, R> =>
  Effect.gen(function*() {
    const started = performance.now()
    yield* work
    return { operations, milliseconds: performance.now() - started }
  })

/**
 * `rounds` for blocks of the same `opsPerBlock` operations each, timed whole: each baseline's ratio for the round
 * is its block time over the measured block's.
 */
export const throughput = <B extends string, E1, R1, E2, R2>(options: {
  readonly rounds: number
  readonly opsPerBlock: number
  readonly measured: (round: number) => Effect.Effect<unknown, E1, R1>
  readonly baselines: Record<B, (round: number) => Effect.Effect<unknown, E2, R2>>
}): Effect.Effect<Paired<B>, E1 | E2, R1 | R2> =>
  rounds({
    rounds: options.rounds,
    measured: (round) => timed(options.opsPerBlock, options.measured(round)),
    baselines: Object.fromEntries(
      Object.entries(options.baselines).map(([name, block]) => [name, (round: number) => timed(options.opsPerBlock, (block as (round: number) => Effect.Effect<unknown, E2, R2>)(round))])
    ) as Record<B, (round: number) => Effect.Effect<Block, E2, R2>>
  })
