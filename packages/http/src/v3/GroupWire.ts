/**
 * The v3 wire shape of a group, field for field what Pinata answers (`id`, `name`, `is_public`, `created_at`), and
 * `createdAt` besides, the name the pinata SDK's `GroupResponseItem` type gives the creation time: the Schema the
 * route catalog documents, and `toWire`, whose result the type checker holds to it.
 */
import type { GroupView } from "@cairn/application"
import { Schema } from "effect"

export const Group = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  is_public: Schema.Boolean,
  created_at: Schema.String,
  createdAt: Schema.String
})

export const toWire = (group: GroupView): typeof Group.Type => ({
  id: group.id,
  name: group.name,
  is_public: group.isPublic,
  created_at: group.createdAt,
  createdAt: group.createdAt
})
