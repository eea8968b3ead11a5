// Package e2e holds acptap's end-to-end acceptance tests. TestMain builds the
// acptap binary, the example external plugin (examples/acme-plugin) and a
// stalling test plugin once; every test then runs `acptap record`, `rebuild`
// and `plugins` as real subprocesses, between a test client and a helper
// agent (the test binary re-executed), with the plugins as real processes,
// and checks the bytes on both sides, the files in the store and the
// processes left behind.
package e2e
