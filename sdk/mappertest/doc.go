// Package mappertest runs a mapper the way the host does, in process but
// over real gRPC (a Unix socket with the plugin's own server and dial options), and holds the conformance
// suite that every mapper in the repository runs: determinism across batch
// sizes and transports, continuation of the ASR streams an earlier
// connection wrote, no panics or errors on malformed frames, and
// diagnostics instead of errors.
package mappertest
