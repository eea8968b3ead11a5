package pluginwire

import (
	"context"
	"fmt"
	"net"
	"path/filepath"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/acptap/acptap/sdk"
)

// ServeInProcess serves m over real gRPC on a Unix socket in dir, with the
// same server and dial options a plugin process uses, and returns the
// client-side Mapper and a function that stops both ends. It is for tests
// and benchmarks (sdk/mappertest); the host runs plugins out of process.
func ServeInProcess(m sdk.Mapper, dir string) (sdk.Mapper, func(), error) {
	sock := filepath.Join(dir, "mapper.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		return nil, nil, fmt.Errorf("listen: %w", err)
	}
	srv := newGRPCServer(nil)
	if err := (&mapperPlugin{impl: m}).GRPCServer(nil, srv); err != nil {
		lis.Close()
		return nil, nil, err
	}
	go func() { _ = srv.Serve(lis) }()
	opts := append(GRPCDialOptions(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	conn, err := grpc.NewClient("unix://"+sock, opts...)
	if err != nil {
		srv.Stop()
		return nil, nil, fmt.Errorf("dial: %w", err)
	}
	raw, err := (&mapperPlugin{}).GRPCClient(context.Background(), nil, conn)
	if err != nil {
		conn.Close()
		srv.Stop()
		return nil, nil, err
	}
	stop := func() {
		conn.Close()
		srv.Stop()
	}
	return raw.(sdk.Mapper), stop, nil
}
