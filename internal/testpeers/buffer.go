package testpeers

import (
	"bytes"
	"sync"
)

// SyncBuffer is a bytes.Buffer safe for a writer goroutine (a subprocess's output copied by
// os/exec) and a test reading it while the process runs.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
