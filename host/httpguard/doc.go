// Package httpguard holds the checks every local HTTP surface of acptap
// makes before its handlers run: the Host header (and a browser's Origin)
// must name this server, not a foreign DNS name that a rebinding page
// resolves to loopback; and a bearer token, compared in constant time.
// `acptap relay` uses it; a local web viewer uses the same checks.
package httpguard
