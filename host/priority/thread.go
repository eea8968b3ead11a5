package priority

// Capture is the nice value the pipeline's capture thread runs at, at
// least: below the tee's copy goroutines (and the editor and the agent, at
// the normal priority), above the plugins (Background), so that in a burst
// the copy path forwards first, capture catches up from the tee's queue,
// and mapping catches up from the wire log.
const Capture = 5

// CaptureTarget is the nice value of the capture thread of a process at
// nice own: Capture, and always below own (up to the maximum, 19).
func CaptureTarget(own int) int { return min(max(own+1, Capture), 19) }
