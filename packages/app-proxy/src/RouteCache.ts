/**
 * Routes by host, remembered for a short time so that a request to one of Cairn's own hosts costs a Map lookup, not
 * a database query. An entry younger than `ttlMs` is used as it is. An older one saying "no route" (up to `staleMs`)
 * is still used while a fresh lookup runs behind it, so no request to Cairn's own hosts waits for a lookup after the
 * first one; an older route is not (a domain removed or made protected must not be served as it was), and its
 * request waits for the lookup. Lookups of one host share one promise. The map holds at most `maxEntries` hosts (a
 * flood of made-up Host headers empties it rather than growing it).
 */

interface Entry<A> {
  readonly value: A | undefined
  readonly at: number
}

export interface RouteCacheOptions {
  readonly ttlMs: number
  readonly staleMs: number
  readonly maxEntries: number
  readonly now?: () => number
}

/** What the cache knows of a host without waiting: a value, known absence (`null`), or nothing (`undefined`). */
export type Known<A> = A | null | undefined

export class RouteCache<A> {
  private readonly entries = new Map<string, Entry<A>>()
  private readonly pending = new Map<string, Promise<A | undefined>>()
  private readonly lookup: (host: string) => Promise<A | undefined>
  private readonly options: RouteCacheOptions
  private readonly now: () => number

  constructor(lookup: (host: string) => Promise<A | undefined>, options: RouteCacheOptions) {
    this.lookup = lookup
    this.options = options
    this.now = options.now ?? Date.now
  }

  /** What is known at once; an old entry is returned and refreshed in the background. */
  peek(host: string): Known<A> {
    const entry = this.entries.get(host)
    if (entry === undefined) return undefined
    const age = this.now() - entry.at
    if (age >= this.options.ttlMs) {
      if (entry.value !== undefined || age >= this.options.staleMs) return undefined
      // A failed refresh keeps the old entry until it is too old to use.
      this.load(host).catch(() => undefined)
    }
    return entry.value ?? null
  }

  /** Looks the host up (one lookup at a time per host) and remembers the answer. */
  load(host: string): Promise<A | undefined> {
    const running = this.pending.get(host)
    if (running !== undefined) return running
    const promise = this.lookup(host).then(
      (value) => {
        this.pending.delete(host)
        if (this.entries.size >= this.options.maxEntries && !this.entries.has(host)) this.entries.clear()
        this.entries.set(host, { value, at: this.now() })
        return value
      },
      (error: unknown) => {
        this.pending.delete(host)
        throw error
      }
    )
    this.pending.set(host, promise)
    return promise
  }

  /** Forgets one host, or all of them. */
  invalidate(host?: string): void {
    if (host === undefined) this.entries.clear()
    else this.entries.delete(host)
  }
}
