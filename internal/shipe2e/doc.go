// Package shipe2e tests the team store end to end: real `acptap record`
// processes between the official SDK peers ship to an embedded NATS
// JetStream server, and a real `acptap collect` process builds the central
// store, through server restarts, collector kills and offline origins.
package shipe2e
