// Package sdk is all an acptap plugin author imports: the Frame and Output
// types, the Mapper interface, and Serve, which runs a Mapper as an
// out-of-process plugin over hashicorp/go-plugin. The gRPC and protobuf types
// stay inside sdk/internal; the host talks to plugins through the same Mapper
// interface (see Dial), so a mapper behaves the same in process and out.
package sdk
