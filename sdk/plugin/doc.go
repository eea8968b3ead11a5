// Package plugin runs an sdk.Mapper as an acptap plugin process: the one
// call a plugin's main makes. It is apart from package sdk (the types an
// author implements) because serving needs the plugin wire, which needs
// those types — the split of terraform-plugin-go's tfprotov6 and
// tf6server. The wire itself (go-plugin, gRPC, protobuf) is internal to the
// acptap module: authors see none of it.
package plugin
