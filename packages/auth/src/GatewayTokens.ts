/**
 * The GatewayTokens port: agents' gateway tokens, derived rather than stored, so no token ever sits in an event or a
 * table; rotating bumps the agent's token generation, so every older token stops matching. The adapter (HMAC-SHA256
 * under a server secret) is `HmacGatewayTokens` in `@cairn/auth/node`.
 */
import { Context, type Redacted } from "effect"

export class GatewayTokens extends Context.Service<GatewayTokens, {
  /** The token of this agent at this generation. */
  readonly tokenFor: (agentId: string, generation: number) => Redacted.Redacted<string>
  /** Whether `candidate` is this agent's token at this generation, compared in constant time. */
  readonly matches: (agentId: string, generation: number, candidate: string) => boolean
}>()("cairn/GatewayTokens") {}
