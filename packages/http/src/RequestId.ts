/**
 * The id that ties a request's log lines, its trace and its response together. A caller (or a proxy in front) may
 * send one in `x-request-id`; it is kept when it is short and made of safe characters (it is written into every
 * log line and echoed in the response, so nothing else is), and a fresh UUID is made otherwise.
 */

export const header = "x-request-id"

/** Letters, digits and `._:-`, 1 to 128 of them: enough for UUIDs, ULIDs and the ids load balancers make. */
const safe = /^[A-Za-z0-9._:-]{1,128}$/

/** The caller's id when it is acceptable, else `undefined`. */
export const parse = (value: string | undefined): string | undefined =>
  value !== undefined && safe.test(value) ? value : undefined

/** The caller's id when acceptable, else a new UUID. */
export const fromHeader = (value: string | undefined): string => parse(value) ?? crypto.randomUUID()
