/** The two IPFS networks a file lives on: `public` content may be served by the gateway, `private` never is. */
import { Schema } from "effect"

export const Network = Schema.Literals(["public", "private"])
export type Network = typeof Network.Type
