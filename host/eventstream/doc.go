// Package eventstream is the live half of every HTTP view of acptap's
// records: a Hub that fans published items out to subscribers through
// bounded queues without ever blocking the publisher, and an SSE writer
// (text/event-stream framing, flushing, write deadlines and the heartbeat
// comment) with a Pump that moves a subscription onto the wire. `acptap
// relay` serves AEP events with it; a web viewer's live view serves its
// own items with the same code.
package eventstream
