/**
 * Decider tests as given / when / then, after emmett's `DeciderSpecification`: given these past events, when this
 * command is decided, then these events are recorded (or this error refuses it).
 */
import type { Decider } from "@cairn/domain"
import { assert } from "@effect/vitest"
import { Result } from "effect"

export const given = <C, E, S, Err>(decider: Decider<C, E, S, Err>, history: ReadonlyArray<E> = []) => ({
  when: (command: C) => {
    const decision = decider.decide(command, history.reduce(decider.evolve, decider.initial))
    return {
      decision,
      then: (expected: ReadonlyArray<E>) => assert.deepStrictEqual(decision, Result.succeed(expected)),
      // Errors are compared by tag and fields: chai's deep equality looks at an Error's message only.
      thenFails: (expected: Err) => {
        assert.isTrue(Result.isFailure(decision), "expected the command to be refused")
        const actual = (decision as Result.Failure<ReadonlyArray<E>, Err>).failure
        assert.deepStrictEqual({ _tag: (actual as { _tag?: string })._tag, ...actual }, { _tag: (expected as { _tag?: string })._tag, ...expected })
      },
      /** The state after recording what was decided: for chaining scenarios. */
      state: () => Result.map(decision, (events) => [...history, ...events].reduce(decider.evolve, decider.initial))
    }
  }
})
