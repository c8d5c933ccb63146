/** What bench/http.ts asks of its load generator (bench/load.ts), passed as a JSON file. */
export interface LoadSpec {
  readonly url: string
  readonly method: "GET" | "POST"
  readonly headers: Record<string, string>
  readonly items: ReadonlyArray<{ readonly path: string; readonly body?: string }>
  readonly amount?: number
  readonly seconds?: number
}
