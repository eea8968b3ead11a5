package pluginwire

// mapper.proto is the host ⇄ plugin wire; its generated Go code is in
// mapperpb. `make generate` (needs protoc, protoc-gen-go and
// protoc-gen-go-grpc on PATH; see docs/plugin-protocol.md) runs this:
//
//go:generate protoc --proto_path=. --go_out=mapperpb --go_opt=paths=source_relative --go-grpc_out=mapperpb --go-grpc_opt=paths=source_relative mapper.proto
