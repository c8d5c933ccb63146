/** What the HTTP benchmarks ask of their load generator (bench/load.ts), and what it answers. */
export interface LoadSpec {
  readonly url: string
  readonly method: "GET" | "POST"
  readonly headers: Record<string, string>
  readonly items: ReadonlyArray<{ readonly path: string; readonly body?: string }>
  readonly amount?: number
  readonly seconds?: number
}

export interface LoadResult {
  /** Completed requests per second: over the run's duration, or for an `amount` run up to its last response. */
  readonly rps: number
  readonly p99: number
  readonly total: number
  /** Requests sent, answered or not. */
  readonly sent: number
  readonly seconds: number
  readonly non2xx: number
  readonly errors: number
  readonly timeouts: number
}
