/**
 * What the chats log records (stream `chats-<agentId>`): each chat turn the agent answered through Cairn, by whom
 * (the event's actor), in which session, on which model, and how long the message and the reply were. Never their
 * text: a conversation is the user's and the agent's, not the audit trail's. Stored: the schema only ever grows
 * optional fields.
 */
import { Schema } from "effect"

export class ChatAnswered extends Schema.TaggedClass<ChatAnswered>()("ChatAnswered", {
  agentId: Schema.String,
  workspaceId: Schema.String,
  sessionKey: Schema.String,
  /** The model that answered (`provider/model`). */
  model: Schema.String,
  /** The message's length and the reply's, in characters (UTF-16 code units, as JSON strings count them). */
  messageLength: Schema.Int,
  replyLength: Schema.Int,
  at: Schema.String
}) {}

export const ChatEvent = Schema.Union([ChatAnswered])
export type ChatEvent = typeof ChatEvent.Type
