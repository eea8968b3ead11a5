// Package recording builds a recording from config and runs it. Plugins
// turns the config into the pipeline's options (the plugin catalog, the
// revisions table, routing by claims and per agent, the limits): the one
// place they are assembled, for record, rebuild, convert and the
// finisher. Recording is one recorded connection with a component
// lifecycle after the OpenTelemetry Collector's (Start, Wait, Shutdown;
// Shutdown is idempotent): the tee starts the agent first, and beside it,
// off the tee's path, the wire log, the pipeline, the store sink and the
// forwarders (the AEP outbox and the OTLP exporter, each a Component)
// start in order and stop in reverse. The agent's exit ends the recording
// within a short grace, or hands the mapping left to a detached finisher
// (host/finisher): acptap exits with the agent, whatever the backlog.
package recording
