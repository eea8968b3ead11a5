// Package natstest runs a real NATS server with JetStream inside a test
// process (file storage in a temporary directory, a port on loopback), for
// the team-store tests of host/ship and the end-to-end tests.
package natstest

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Server is an embedded JetStream server that can be stopped and started
// again on the same port and storage, as a restarted server would be.
type Server struct {
	t    testing.TB
	opts server.Options
	srv  *server.Server
}

// Option adjusts the server's options before it starts.
type Option func(*server.Options)

// WithUsers sets the server's users (and so requires authentication).
func WithUsers(users ...*server.User) Option {
	return func(o *server.Options) { o.Users = users }
}

// WithMaxPayload sets the largest message the server accepts.
func WithMaxPayload(n int32) Option {
	return func(o *server.Options) { o.MaxPayload = n }
}

// Start starts a server on a free loopback port with JetStream storage in a
// temporary directory; it is shut down when the test ends.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := &Server{t: t, opts: server.Options{
		Host: "127.0.0.1", Port: freePort(t), JetStream: true, StoreDir: t.TempDir(),
		NoLog: true, NoSigs: true, ServerName: "acptap-test",
	}}
	for _, o := range opts {
		o(&s.opts)
	}
	s.Restart()
	t.Cleanup(s.Stop)
	return s
}

// URL is the server's client URL.
func (s *Server) URL() string { return fmt.Sprintf("nats://%s:%d", s.opts.Host, s.opts.Port) }

// Stop shuts the server down (idempotent).
func (s *Server) Stop() {
	if s.srv != nil {
		s.srv.Shutdown()
		s.srv.WaitForShutdown()
		s.srv = nil
	}
}

// Restart starts the server (again) on the same port and storage.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	o := s.opts
	srv, err := server.NewServer(&o)
	if err != nil {
		s.t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(30 * time.Second) {
		s.t.Fatal("nats server did not start")
	}
	s.srv = srv
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
