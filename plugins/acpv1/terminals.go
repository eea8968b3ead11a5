package acpv1

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/acptap/acptap/plugins/internal/acpasr"
	"github.com/acptap/acptap/sdk"
	"github.com/acptap/acptap/sdk/asr"
)

// ACP v1 terminals are the client's: the agent asks the client to run a
// command (terminal/create) and to report its output (terminal/output)
// and its exit (terminal/wait_for_exit). The responses on the wire become
// the terminal_update snapshots ACP v2 agents send, so a v1 terminal is a
// terminal record like a v2 one (decision 1). env is not recorded: like an
// MCP server's (ASR-712), it can hold credentials.

// terminalCreate remembers what terminal/create asked for.
func terminalCreate(sid string, params obj) *pending {
	p := &pending{session: sid}
	p.command, _ = params.str("command")
	if args, ok := params.array("args"); ok && p.command != "" {
		words := []string{shellQuote(p.command)}
		for _, a := range args {
			var s string
			if json.Unmarshal(a, &s) == nil {
				words = append(words, shellQuote(s))
			}
		}
		p.command = strings.Join(words, " ")
	}
	p.cwd, _ = params.str("cwd")
	return p
}

// terminalAnswer turns a terminal response into a terminal_update:
// terminal/create → the command and cwd; terminal/output → the output so
// far (a replacement snapshot, base64) and the exit status when the
// command has exited; terminal/wait_for_exit → the exit status.
func (t *translator) terminalAnswer(f *sdk.Frame, p *pending, result obj) []acpasr.Translated {
	u := map[string]json.RawMessage{"sessionUpdate": rawString("terminal_update")}
	var hint acpasr.Hint
	switch p.method {
	case "terminal/create":
		id, ok := result.str("terminalId")
		if !ok {
			t.diag(sdk.SeverityWarning, p.session, "terminal/create response has no terminalId", "the terminal is not recorded")
			return nil
		}
		u["terminalId"] = rawString(id)
		if p.command != "" {
			u["command"] = rawString(p.command)
		}
		if p.cwd != "" {
			u["cwd"] = rawString(p.cwd)
		}
		hint = acpasr.Hint{Session: p.session, Lossy: []string{asr.LossV1TerminalOutput}}
	case "terminal/output":
		u["terminalId"] = rawString(p.terminal)
		out, ok := result.str("output")
		if !ok {
			t.diag(sdk.SeverityWarning, p.session, "terminal/output response has no output string", "output unchanged")
		} else {
			u["output"] = marshal(map[string]string{"data": base64.StdEncoding.EncodeToString([]byte(out))})
		}
		if _, ok := result.object("exitStatus"); ok {
			u["exitStatus"] = result["exitStatus"]
		}
	case "terminal/wait_for_exit":
		u["terminalId"] = rawString(p.terminal)
		exit := map[string]json.RawMessage{}
		for _, k := range []string{"exitCode", "signal"} {
			if v, ok := result[k]; ok {
				exit[k] = v
			}
		}
		u["exitStatus"] = marshal(exit)
	}
	return []acpasr.Translated{{Frame: notification(*f, p.session, marshal(u)), Hint: hint}}
}

// shellQuote quotes a word for a POSIX shell when it needs it, so that the
// recorded command line reads as the command that ran.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-./=:@%+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
