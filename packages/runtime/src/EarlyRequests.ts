/**
 * Requests that reach Cairn's Node server before its handler does. Effect's Node adapter listens when the server's
 * layer is built, and attaches its `request` listener only once the routes' layers are built after it: a request
 * accepted in between (a client polling `/readyz` while the server starts) would be emitted to no listener and left
 * unanswered for ever. Such requests are held here and handed to the handler as soon as it is attached, through
 * every wrapper the server's `emit` has (forwarding, app routing, lingering close), as if they had just arrived.
 */
import type * as Http from "node:http"

/** Holds `server`'s requests until a `request` listener is attached. Attach last: it must be the outermost `emit`. */
export const attach = (server: Http.Server): void => {
  const inner = server.emit as (this: Http.Server, event: string | symbol, ...args: Array<any>) => boolean
  let held: Array<Array<any>> = []
  const release = () => {
    const waiting = held
    held = []
    for (const args of waiting) inner.call(server, "request", ...args)
  }
  server.on("newListener", (event) => {
    // Emitted before the listener is added: hand the held requests over once it is there.
    if (event === "request" && held.length > 0) setImmediate(release)
  })
  server.emit = function(this: Http.Server, event: string | symbol, ...args: Array<any>): boolean {
    if (event === "request" && this.listenerCount("request") === 0) {
      held.push(args)
      return true
    }
    return inner.call(this, event, ...args)
  } as typeof server.emit
}
