/**
 * Lingering close for Cairn's Node server. A response can be sent before its request's body was read: a 401 on an
 * upload with a bad key, a 413 decided from `Content-Length`. Effect's Node adapter then reads at most 256 KiB more
 * of the body and closes the socket half a second later, while most clients (fetch/undici, the pinata SDK) are
 * still writing: they fail with `write EPIPE` ("fetch failed") and never see the status. A loaded machine hits it
 * most, since its clients write slowly.
 *
 * As nginx does (`lingering_close`), the server here keeps reading and discarding such a body after the response,
 * for at most `totalMs` and while the client keeps sending (`idleMs` between reads). A client that writes its whole
 * body before reading gets its status; one that reads while it writes (curl with `Expect: 100-continue`, a raw
 * socket) has it at once. Then the connection is closed if the response said so (the adapter says
 * `Connection: close` past 256 KiB unread), else kept for the next request.
 *
 * It takes over from the adapter's own teardown: the `finish` listeners the adapter adds to a response while it
 * handles the `request` event are replaced by this one, which keeps the adapter's two guards against Node's
 * defaults (no `_dump`, no destroy as soon as the response is flushed). A test drives it on a raw socket.
 */
import type * as Http from "node:http"

export interface Bounds {
  /** The longest a refused body is read after its response (nginx's `lingering_time`). */
  readonly totalMs: number
  /** The longest the client may pause between two reads of it (nginx's `lingering_timeout`). */
  readonly idleMs: number
}

export const defaultBounds: Bounds = { totalMs: 30_000, idleMs: 5_000 }

/** Node's private fields this relies on, as the adapter does. */
interface Internals {
  _consuming: boolean
  _last: boolean
}

/** Lingers on every HTTP/1 request of `server` whose response finishes before its body; returns the detacher. */
export const attach = (server: Http.Server, bounds: Bounds = defaultBounds): () => void => {
  const originalEmit = server.emit as (this: Http.Server, event: string | symbol, ...args: Array<any>) => boolean
  const emit = function(this: Http.Server, event: string | symbol, ...args: Array<any>): boolean {
    if (event !== "request") return originalEmit.call(this, event, ...args)
    const [request, response] = args as [Http.IncomingMessage, Http.ServerResponse]
    if (request.httpVersionMajor !== 1) return originalEmit.call(this, event, ...args)
    const before = response.listeners("finish")
    const handled = originalEmit.call(this, event, ...args)
    for (const added of response.listeners("finish")) {
      if (!before.includes(added)) response.off("finish", added as () => void)
    }
    response.prependListener("finish", () => linger(request, response, bounds))
    return handled
  }
  server.emit = emit as typeof server.emit
  return () => {
    if (server.emit === emit) server.emit = originalEmit as typeof server.emit
  }
}

const linger = (request: Http.IncomingMessage, response: Http.ServerResponse, bounds: Bounds) => {
  if (request.complete || request.destroyed) return
  const socket = request.socket
  const closeAfter = (response as unknown as Internals)._last
  // Node would otherwise discard the body without bound, or destroy the socket as soon as the response is flushed.
  ;(request as unknown as Internals)._consuming = true
  ;(response as unknown as Internals)._last = false
  let idle: ReturnType<typeof setTimeout> | undefined
  const settle = () => {
    clearTimeout(idle)
    clearTimeout(total)
    request.off("data", onData)
  }
  const giveUp = () => {
    settle()
    socket.destroy()
  }
  const onData = () => {
    clearTimeout(idle)
    idle = setTimeout(giveUp, bounds.idleMs)
  }
  const total = setTimeout(giveUp, bounds.totalMs)
  request.on("data", onData)
  request.once("close", settle)
  request.once("end", () => {
    settle()
    if (!closeAfter) return
    // The client has its response and closes too; one that does not is let go of after a while.
    socket.end()
    setTimeout(() => socket.destroy(), bounds.idleMs).unref()
  })
  onData()
  request.resume()
}
