/** What the warm pool records: each is recorded as it happened (the pool is the only writer of its node's stream). */
import { Schema } from "effect"
import { fieldsOf } from "../Decider.ts"
import { PoolGatewayDiscarded, PoolGatewayReserved, PoolGatewayTaken } from "./Events.ts"

export class ReservePoolGateway extends Schema.TaggedClass<ReservePoolGateway>()("ReservePoolGateway", fieldsOf(PoolGatewayReserved.fields)) {}

export class TakePoolGateway extends Schema.TaggedClass<TakePoolGateway>()("TakePoolGateway", fieldsOf(PoolGatewayTaken.fields)) {}

export class DiscardPoolGateway extends Schema.TaggedClass<DiscardPoolGateway>()("DiscardPoolGateway", fieldsOf(PoolGatewayDiscarded.fields)) {}

export type PoolCommand = ReservePoolGateway | TakePoolGateway | DiscardPoolGateway
