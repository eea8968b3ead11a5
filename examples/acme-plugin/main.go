// Command acme-plugin is an example external acptap plugin for a vendor
// extension: it maps the `_acme/progress` session updates of a fictional
// agent vendor into records of type `_acme/progress`, one ASR stream per
// session (sessions/<id>/acme.asr.jsonl), beside the built-in acpv2 stream.
//
// Build it under the name the host looks for and put it on the plugin path:
//
//	go build -o ~/.local/lib/acptap/plugins/acptap-plugin-acme ./examples/acme-plugin
//
// See README.md for the configuration (plugin_path, revisions, sha256).
package main

import (
	"github.com/acptap/acptap/sdk/plugin"
)

func main() { plugin.Serve(New()) }
