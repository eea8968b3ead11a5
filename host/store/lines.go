package store

// OpenLines opens any JSONL file for appending with the stream writer's
// guarantees (one write per line, no line after a failed write), after
// repairing a torn tail as OpenStream does. The relay stores its events
// with it.
func OpenLines(path string) (*StreamWriter, *Repair, error) { return openLines(path) }
