// Package aepsender is the HTTP binding of the AEP events (AEP-0003 §3.2)
// on the recording side: a bounded outbox that the store sink fans AEP
// events into, and a sender that posts them to a relay as NDJSON batches
// (POST {base}/events, AEP-Version: 0.1), retrying network errors and 5xx
// answers with the same events, ids included. Adding to the outbox never
// blocks, so a relay that is down or slow never touches the tee; when the
// outbox is full, debug and info events are dropped first, and every drop
// is counted.
package aepsender
