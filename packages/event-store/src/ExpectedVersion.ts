/**
 * What an append expects of a stream before it writes, as in EventStoreDB: `Any` never fails on the version,
 * `NoStream` requires an empty stream, `StreamExists` requires at least one event, `Exact(n)` requires version n.
 * A stream's version is the number of events in it, so the first event has version 1 and `Exact(0)` is `NoStream`.
 */
import { Data } from "effect"

export type ExpectedVersion = Data.TaggedEnum<{
  Any: {}
  NoStream: {}
  StreamExists: {}
  Exact: { readonly version: number }
}>

const ExpectedVersion = Data.taggedEnum<ExpectedVersion>()

export const Any: ExpectedVersion = ExpectedVersion.Any()
export const NoStream: ExpectedVersion = ExpectedVersion.NoStream()
export const StreamExists: ExpectedVersion = ExpectedVersion.StreamExists()
export const Exact = (version: number): ExpectedVersion => ExpectedVersion.Exact({ version })

/** Whether a stream at `actual` satisfies the expectation (0 means the stream has no events). */
export const isSatisfiedBy = (expected: ExpectedVersion, actual: number): boolean =>
  ExpectedVersion.$match(expected, {
    Any: () => true,
    NoStream: () => actual === 0,
    StreamExists: () => actual > 0,
    Exact: ({ version }) => actual === version
  })

/** A short text for errors and logs: `any`, `no-stream`, `stream-exists` or the exact number. */
export const describe = (expected: ExpectedVersion): string =>
  ExpectedVersion.$match(expected, {
    Any: () => "any",
    NoStream: () => "no-stream",
    StreamExists: () => "stream-exists",
    Exact: ({ version }) => String(version)
  })
