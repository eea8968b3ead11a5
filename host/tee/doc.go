// Package tee owns the byte-transparent stdio pass-through between an editor and the agent it
// runs: it spawns the agent, forwards every byte of stdin and stdout unchanged (forward first,
// copy second), passes stderr and the exit status straight through, and forwards signals.
// Off the copy path it hands line copies to capture over a bounded queue it never blocks on;
// what does not fit is counted and declared as a gap, never silently lost.
package tee
