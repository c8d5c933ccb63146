/**
 * What a section of the AgentEngine contract gets from the main suite (AgentEngineContract.ts): the suite's `it`
 * (inside the engine's layer), its per-test timeout and clock driver, and agents to test with. Sections add cases for
 * one group of operations each (console, files, config, tasks, snapshots), so that one file says what one feature promises.
 */
import type { Vitest } from "@effect/vitest"
import type { Effect } from "effect"
import type { AgentEngine } from "../AgentEngine.ts"

export interface SectionContext<R = never> {
  readonly it: Vitest.MethodsNonLive<AgentEngine | R>
  /** Pass as the last argument of every `it.effect`. */
  readonly timeout: number | undefined
  /** Wraps operations that wait for a gateway to become ready (`start`, `restart`). */
  readonly drive: <A, E>(operation: Effect.Effect<A, E>) => Effect.Effect<A, E>
  /** A stopped, provisioned agent of the newest version, shared by cases that use names of their own in it. */
  readonly sharedAgent: Effect.Effect<string, unknown, AgentEngine>
  /** A running agent of the newest version, shared (a real engine pays for each gateway start). */
  readonly aRunningAgent: Effect.Effect<string, unknown, AgentEngine>
  /** A new agent of the newest version, provisioned and stopped, for cases that need one of their own. */
  readonly freshAgent: Effect.Effect<string, unknown, AgentEngine>
}
