// Package pluginwire is the host ⇄ plugin wire, internal to the acptap
// module: the go-plugin handshake and plugin set (wire version 1), the gRPC
// client and server adapters of sdk.Mapper, the protobuf messages
// (mapper.proto, generated into mapperpb) and their conversion to and from
// the sdk types, the splitting of large lines and outputs into parts and
// their assembly, the frame builder that turns wire lines into sdk.Frames
// the way the host's router does, and in-process serving over a real gRPC
// socket for tests. sdk/plugin.Serve, sdk/mappertest and the host use it;
// other modules cannot, so none of it is plugin-author API, and a plugin
// built against any release speaks the same wire while WireVersion holds.
package pluginwire
