// Package config loads acptap's configuration in layers — built-in
// defaults, a TOML file, ACPTAP_ environment variables, then command-line
// flags — into a typed Config, and validates it with messages that name the
// offending key. It also builds the host's logger, which never writes to
// stdout (stdout belongs to the editor).
package config
