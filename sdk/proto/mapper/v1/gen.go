// Package mapperv1 holds mapper.proto, the host ⇄ plugin wire. The generated
// Go code lives in sdk/internal/mapperpb so that plugin authors never see it.
package mapperv1

//go:generate protoc --proto_path=. --go_out=../../../internal/mapperpb --go_opt=paths=source_relative --go-grpc_out=../../../internal/mapperpb --go-grpc_opt=paths=source_relative mapper.proto
