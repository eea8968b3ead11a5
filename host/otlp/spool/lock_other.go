//go:build !unix

package spool

// Claim always succeeds where flock is unavailable: two processes sending
// from one spool only duplicate deliveries (at-least-once).
func (s *Spool) Claim() (release func(), ok bool, err error) {
	return func() {}, true, nil
}
