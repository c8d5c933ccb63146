/** Agent ids are short lowercase slugs, as Pinata's are (x0i33jye): drawn here for a create and for the warm pool. */
const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

export const newAgentId = () => Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) => alphabet[b % alphabet.length]).join("")
