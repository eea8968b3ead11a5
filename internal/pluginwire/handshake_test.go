package pluginwire

import (
	"fmt"
	"os"
	"strings"
	"testing"

	pb "github.com/acptap/acptap/internal/pluginwire/mapperpb"
)

// TestWireVersionMatchesProto keeps the Go constants and mapper.proto in
// sync: the header states the wire version and the package carries it.
func TestWireVersionMatchesProto(t *testing.T) {
	src, err := os.ReadFile("mapper.proto")
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	if want := fmt.Sprintf("// Wire version: %d ", WireVersion); !strings.Contains(text, want) {
		t.Errorf("mapper.proto header does not say %q", want)
	}
	if want := fmt.Sprintf("package acptap.mapper.v%d;", WireVersion); !strings.Contains(text, want) {
		t.Errorf("mapper.proto does not declare %q", want)
	}
	if got := pb.File_mapper_proto.Package(); string(got) != fmt.Sprintf("acptap.mapper.v%d", WireVersion) {
		t.Errorf("generated code is for package %s; regenerate with `make generate`", got)
	}
	if _, ok := VersionedPlugins(nil)[WireVersion]; !ok {
		t.Error("VersionedPlugins has no entry for WireVersion")
	}
	if Handshake.ProtocolVersion != WireVersion {
		t.Errorf("handshake protocol version %d ≠ wire version %d", Handshake.ProtocolVersion, WireVersion)
	}
	if PartSize > MaxMessageSize/4 || responseBudget > MaxMessageSize/2 {
		t.Errorf("part size %d must be well under the max message size %d", PartSize, MaxMessageSize)
	}
}

// TestHandshakeUnchanged: plugins built against earlier releases (when the
// wire lived in package sdk) handshake with these values; changing any of
// them cuts those plugins off, which only a new wire version may do.
func TestHandshakeUnchanged(t *testing.T) {
	if WireVersion != 1 || Handshake.MagicCookieKey != "ACPTAP_PLUGIN_MAGIC_COOKIE" ||
		Handshake.MagicCookieValue != "9c6e0a3b1f4d4e0f8a7d2b5c3e1f6a90-acptap-mapper" || PluginKey != "mapper" {
		t.Errorf("wire v%d, cookie %s=%s, plugin key %q: not what wire v1 plugins speak",
			WireVersion, Handshake.MagicCookieKey, Handshake.MagicCookieValue, PluginKey)
	}
	if got := pb.File_mapper_proto.Services().Get(0).FullName(); got != "acptap.mapper.v1.Mapper" {
		t.Errorf("gRPC service %s, want acptap.mapper.v1.Mapper", got)
	}
}
