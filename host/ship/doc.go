// Package ship carries a store's outputs to a team store on NATS JetStream
// and back: the Shipper publishes the complete lines appended to each output
// file (ASR streams, other plugins' streams, AEP files, wire logs when asked)
// under one subject per origin and file, and the Collector writes them into a
// central store with the local layout, one directory per origin.
//
// Exactly once comes from two checks, not from timing: the Shipper publishes
// each chunk with Nats-Expected-Last-Subject-Sequence (a resend after a lost
// acknowledgement is refused, and the Shipper resynchronises from the last
// message on the subject), and the Collector appends a chunk only after the
// lines before it, skipping what the file already holds.
package ship
