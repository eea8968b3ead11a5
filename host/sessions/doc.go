// Package sessions lists what a store holds, for `acptap sessions` and the
// web viewer: each recorded session (from its ASR stream: agent, revision,
// started, last activity, connections, turns, records, losses, failures,
// size, workspace), filtered by agent, date and cwd, newest first; and the
// connections whose wire log names no session (a session start that
// failed), with the errors the agent answered. It reads wire logs through
// Frames, which also serves `acptap show` of a wire log.
package sessions
