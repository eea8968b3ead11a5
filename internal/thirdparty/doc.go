// Package thirdparty tests acptap against ACP software this project did not
// write, pinned from npm in testdata/thirdparty (installed by `make
// node-deps`): the client acpx driving the example agent through `acptap
// record`, and Zed's Claude Code agent (claude-agent-acp) behind `acptap
// record`, driven by the test as the editor, failing its prompt for want of
// credentials without any network call.
package thirdparty
