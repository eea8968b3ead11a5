# The test command of the README. It installs the npm packages the
# SDK-driven tests need (the official @agentclientprotocol/sdk, pinned in
# testdata/sdk/package-lock.json, and the third-party peers of
# testdata/thirdparty), then vets and tests every package, and those of the
# example plugin, a module of its own (examples/acme-plugin).
.PHONY: test node-deps generate bench

test: node-deps
	go vet ./...
	go test -count=1 ./...
	cd examples/acme-plugin && go vet ./... && go test -count=1 ./...

node-deps: testdata/sdk/node_modules/.package-lock.json testdata/sdk24/node_modules/.package-lock.json testdata/thirdparty/node_modules/.package-lock.json

testdata/sdk/node_modules/.package-lock.json: testdata/sdk/package.json testdata/sdk/package-lock.json
	cd testdata/sdk && npm ci --no-audit --no-fund --loglevel=error

# Third-party ACP software the tests drive (acpx, claude-agent-acp), pinned in
# testdata/thirdparty/package-lock.json.
testdata/thirdparty/node_modules/.package-lock.json: testdata/thirdparty/package.json testdata/thirdparty/package-lock.json
	cd testdata/thirdparty && npm ci --no-audit --no-fund --loglevel=error

# The peers of the newer ACP v2 draft (2.0.0-alpha.13): SDK 2.4.0.
testdata/sdk24/node_modules/.package-lock.json: testdata/sdk24/package.json testdata/sdk24/package-lock.json
	cd testdata/sdk24 && npm ci --no-audit --no-fund --loglevel=error

# acpx (a third-party ACP v1 client, pinned in testdata/acpx-replay) for the
# tests of `acptap replay --serve` (internal/replaytest). `npm install` with
# the committed lock, not `npm ci`: npm ci rejects this lock because npm
# leaves the other platforms' optional native packages of a dependency out
# of it; `--no-save` keeps the lock as committed.
node-deps: testdata/acpx-replay/node_modules/.package-lock.json

testdata/acpx-replay/node_modules/.package-lock.json: testdata/acpx-replay/package.json testdata/acpx-replay/package-lock.json
	cd testdata/acpx-replay && npm install --no-save --no-audit --no-fund --loglevel=error

# Regenerate the protobuf code of the plugin wire (needs protoc,
# protoc-gen-go and protoc-gen-go-grpc on PATH; see docs/plugin-protocol.md).
generate:
	go generate ./internal/pluginwire/

bench:
	./scripts/bench.sh
