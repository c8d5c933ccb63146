/**
 * Time travel on an agent's GET routes (`?at=`): the state as it was at a time or a log position, folded from the
 * log (AgentsAt in the application). One query, one description, for every route that takes it.
 */
import { Schema } from "effect"

/** The `?at=` query: an ISO time or a log position (`transactionId:globalPosition`). */
export const AtQuery = Schema.Struct({ at: Schema.optionalKey(Schema.String) })

export const atDescription =
  "`at` (optional): the state as it was then, folded from the log: an ISO time with its offset (`2026-11-28T14:00:00Z`; a date alone is its midnight UTC) " +
  "or a log position `transactionId:globalPosition` (each event's `position` in `GET /v0/agents/{agentId}/events`); anything else is 400 `Validation failed: …`. " +
  "404 `Agent not found` before the agent's first event or after its deletion."
