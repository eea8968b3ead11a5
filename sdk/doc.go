// Package sdk is the API of an acptap plugin author: the Frame a plugin
// receives, the Output it produces, the Mapper, Session and Replayer
// interfaces it implements, and the Info it describes itself with; and the
// two helpers every plugin needs: Frame.RPC, a frame's JSON-RPC head read
// once, and Streams, the ASR stream writer (headers, envelopes, seqs,
// continuation across connections, losses declared once).
// sdk/plugin.Serve runs a Mapper as a plugin process; sdk/mappertest tests
// one; sdk/asr and sdk/aep are the models of what it writes. The plugin
// wire (go-plugin, gRPC, protobuf) is internal to the acptap module; the
// host talks to a plugin through this same Mapper interface, so a mapper
// behaves the same in process and out.
package sdk
