package release

// Version is acptap's release. A build may override the host's with
// -ldflags "-X github.com/acptap/acptap/host/cli.Version=…".
const Version = "0.1.0"
