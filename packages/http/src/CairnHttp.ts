/**
 * Every route Cairn serves, as one layer for `HttpRouter.serve` (Node) or `HttpRouter.toWebHandler` (Bun, Deno,
 * embedding). It needs the EventStore and whatever the routes' services need.
 */
import * as HealthRoutes from "./HealthRoutes.ts"

export const routes = HealthRoutes.layer
