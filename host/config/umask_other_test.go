//go:build !unix

package config

// setUmask is a no-op where there is no umask.
func setUmask(int) int { return 0 }
