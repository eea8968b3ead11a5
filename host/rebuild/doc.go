// Package rebuild re-derives a store's outputs from its wire logs: a
// session's ASR streams and AEP file are a function of the ordered list of
// wire logs that observed it (ordered by header startedAt, then connection
// id). Run maps the connections in that order into a staging store beside
// the real one, each connection continuing what the earlier ones produced
// in this rebuild exactly as a live run would have (connection count,
// prior streams, AEP epoch), and swaps the new outputs in only when every
// connection mapped; an interrupted rebuild leaves the store as it was.
package rebuild
