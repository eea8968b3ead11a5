// Package pipeline carries captured lines from the tee to the plugins and
// their outputs to the store: capture (the wire log, written first), the
// router (protocol revision from initialize), one feeder per plugin that
// never slows capture (a feeder that falls behind catches up from the wire
// log), plugin restarts with re-feeding. Outputs go to a Sink and session
// state comes from a SessionStore, interfaces declared here and implemented
// over the store by host/storesink.
package pipeline
