// Package tee owns the byte-transparent stdio pass-through between an editor and the agent it
// runs: it spawns the agent, forwards every byte of stdin and stdout unchanged (forward first,
// copy second), passes stderr and the exit status straight through, and forwards signals.
// Just before each read is forwarded it hands the read itself (its buffer, recycled once both
// sides are done) to capture over a queue bounded in items and bytes that it never blocks on;
// the receiver splits lines (captured.Splitter). What does not fit is counted and declared as a gap,
// never silently lost. On Linux the agent runs in a process group of its own, which signals
// are relayed to and which ends with the tee, a watchdog process covering the tee's own
// SIGKILL (procgroup_linux.go).
package tee
