/**
 * The wire shapes of `/v3/pinata/keys`, field for field what the pinata SDK's `keys.*` read: a created key
 * (`{JWT, pinata_api_key, pinata_api_secret}`, unenveloped, the only time a secret is answered) and a listed one
 * (Pinata's `KeyListItem` without its `secret`: Cairn never answers a secret twice). `scopes.resources` lists the
 * key's Cairn scopes; `scopes.admin` says whether it may manage keys (`org:keys`).
 */
import type { KeyView } from "@cairn/application"
import { ApiKey } from "@cairn/domain"
import { Schema } from "effect"

export const Created = Schema.Struct({
  JWT: Schema.String,
  pinata_api_key: Schema.String,
  pinata_api_secret: Schema.String
})

export const Key = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  key: Schema.String,
  max_uses: Schema.NullOr(Schema.Number),
  uses: Schema.Number,
  user_id: Schema.String,
  scopes: Schema.Struct({
    admin: Schema.Boolean,
    endpoints: Schema.Struct({ pinning: Schema.Struct({ pinFileToIPFS: Schema.Boolean, pinJSONToIPFS: Schema.Boolean }) }),
    resources: Schema.Array(Schema.String)
  }),
  revoked: Schema.Boolean,
  createdAt: Schema.String,
  updatedAt: Schema.String
})

export const KeyList = Schema.Struct({ keys: Schema.Array(Key), count: Schema.Number })

export const toWire = (key: KeyView): typeof Key.Type => ({
  id: key.keyId,
  name: key.name,
  key: key.keyId,
  max_uses: key.maxUses,
  uses: key.uses,
  user_id: key.userId,
  scopes: {
    admin: key.scopes.includes("org:keys"),
    endpoints: { pinning: ApiKey.pinningOf(key.scopes) },
    resources: [...key.scopes]
  },
  revoked: key.revoked,
  createdAt: key.createdAt,
  updatedAt: key.updatedAt
})
