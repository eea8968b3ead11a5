package agentlib

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"
)

// turn plays the scripted answer to one session/prompt.
type turn struct {
	a      *agent
	s      *session
	n      int // 1-based prompt number in the session
	reqID  json.RawMessage
	prompt []json.RawMessage

	responded bool
	open      []string // tool calls not yet in a final status, in order

	v1        bool            // the connection speaks ACP v1 (v1.go)
	announced map[string]bool // v1: tool calls already sent as tool_call
	stop      string          // v1: the stop reason of the prompt response
}

func (t *turn) messageID() string { return fmt.Sprintf("user-%d", t.n) }

// respond answers the session/prompt request once.
func (t *turn) respond() {
	if t.responded {
		return
	}
	t.responded = true
	if t.v1 {
		_ = t.a.conn.Reply(t.reqID, v1PromptResponse{StopReason: t.stop})
		return
	}
	_ = t.a.conn.Reply(t.reqID, promptResponse{MessageID: t.messageID()})
}

// send sends one session/update of the turn, in the connection's dialect.
func (t *turn) send(u any) error {
	if t.v1 {
		var ok bool
		if u, ok = v1Update(u, t.announced); !ok {
			return nil
		}
	}
	return t.a.conn.Notify("session/update", sessionNotification{SessionID: t.s.id, Update: u})
}

// update sends one session/update, after the configured pause.
func (t *turn) update(ctx context.Context, u any) error {
	if d := t.a.opts.Delay; d > 0 {
		timer := time.NewTimer(d)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if tc, ok := u.(toolCallUpdate); ok {
		t.track(tc)
	}
	return t.send(u)
}

// track remembers which tool calls are still open.
func (t *turn) track(tc toolCallUpdate) {
	idx := -1
	for i, id := range t.open {
		if id == tc.ToolCallID {
			idx = i
		}
	}
	switch tc.Status {
	case "completed", "failed", "cancelled":
		if idx >= 0 {
			t.open = append(t.open[:idx], t.open[idx+1:]...)
		}
	default:
		if idx < 0 {
			t.open = append(t.open, tc.ToolCallID)
		}
	}
}

func (t *turn) run(ctx context.Context) {
	// The prompt is inserted: echo it as the user message (it may come before
	// or after the prompt response).
	// (A v1 agent does not echo a live prompt: v1 clients show it already.)
	for _, block := range t.prompt {
		if t.v1 {
			break
		}
		_ = t.send(contentChunk{SessionUpdate: "user_message_chunk", MessageID: t.messageID(), Content: block})
	}
	if t.a.opts.RespondFirst && !t.v1 {
		t.respond()
	}

	var err error
	if t.n%2 == 1 {
		err = t.editTurn(ctx)
	} else {
		err = t.explainTurn(ctx)
	}

	stop := "end_turn"
	switch {
	case err == nil:
	case errors.Is(err, context.Canceled), errors.Is(err, errConnClosed), errors.Is(err, errCancelled):
		stop = "cancelled"
	default:
		t.a.logf("turn %d of %s failed: %v", t.n, t.s.id, err)
		stop = "error"
	}
	if stop != "end_turn" {
		for _, id := range t.open {
			_ = t.send(toolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: id, Status: finalStatus(stop)})
		}
	}
	// The final idle snapshot is sent even when the turn was cancelled.
	final := stateUpdate{SessionUpdate: "state_update", State: "idle", StopReason: stop}
	if stop == "error" {
		_ = t.send(idleError{stateUpdate: final, Error: rpcError{Code: codeInternalError, Message: err.Error()}})
	} else {
		_ = t.send(final)
	}
	if t.v1 && stop == "error" {
		// v1 has no "error" stop reason: the prompt request fails.
		t.responded = true
		_ = t.a.conn.ReplyError(t.reqID, &rpcError{Code: codeInternalError, Message: err.Error()})
		return
	}
	t.stop = stop
	// Inserted prompts always succeed with their messageId, even if cancelled.
	t.respond()
}

// idleError is an idle state_update with stopReason "error" and its flat error.
type idleError struct {
	stateUpdate
	Error rpcError `json:"error"`
}

var errCancelled = errors.New("cancelled by the user")

func (t *turn) chunk(ctx context.Context, kind, messageID, s string) error {
	return t.update(ctx, contentChunk{SessionUpdate: kind, MessageID: messageID, Content: text(s)})
}

func (t *turn) state(ctx context.Context, state string) error {
	return t.update(ctx, stateUpdate{SessionUpdate: "state_update", State: state})
}

func (t *turn) plan(ctx context.Context, statuses ...string) error {
	entries := []planEntry{
		{Content: "Find where the greeting is printed", Priority: "high"},
		{Content: "Fix the typo in main.go", Priority: "high"},
		{Content: "Run the tests", Priority: "medium"},
	}
	for i := range entries {
		entries[i].Status = statuses[i]
	}
	return t.update(ctx, planUpdate{SessionUpdate: "plan_update", Plan: planItems{Type: "items", PlanID: "plan-1", Entries: entries}})
}

func (t *turn) usage(ctx context.Context) error {
	return t.update(ctx, usageUpdate{
		SessionUpdate: "usage_update",
		Used:          uint64(5200 * t.n),
		Size:          200000,
		Cost:          &cost{Amount: 0.021 * float64(t.n), Currency: "USD"},
	})
}

// steps runs fs in order and stops at the first error.
func steps(fs ...func() error) error {
	for _, f := range fs {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

const (
	oldLine = `	fmt.Println("Helo, world!")`
	newLine = `	fmt.Println("Hello, world!")`
)

// editTurn: think, plan, propose an edit, ask permission, apply it with a
// diff, run the tests, report usage.
func (t *turn) editTurn(ctx context.Context) error {
	thought := fmt.Sprintf("thought-%d", t.n)
	msg := fmt.Sprintf("agent-%d", t.n)
	file := filepath.Join(t.s.cwd, "main.go")
	edit := fmt.Sprintf("call_%d_edit", t.n)
	test := fmt.Sprintf("call_%d_test", t.n)
	rawInput := map[string]any{"path": file, "oldText": oldLine, "newText": newLine}

	err := steps(
		func() error { return t.state(ctx, "running") },
		func() error {
			return t.chunk(ctx, "agent_thought_chunk", thought, "The user wants the greeting fixed. ")
		},
		func() error {
			return t.chunk(ctx, "agent_thought_chunk", thought, "It is printed in main.go; the word \"Helo\" is misspelt.")
		},
		func() error { return t.plan(ctx, "completed", "in_progress", "pending") },
		func() error {
			return t.chunk(ctx, "agent_message_chunk", msg, "I found the typo in `main.go`. ")
		},
		func() error {
			return t.chunk(ctx, "agent_message_chunk", msg, "I'll change \"Helo\" to \"Hello\".")
		},
		func() error {
			return t.update(ctx, toolCallUpdate{
				SessionUpdate: "tool_call_update", ToolCallID: edit, Name: "edit_file",
				Title: "Edit main.go", Kind: "edit", Status: "pending", RawInput: rawInput,
				Locations: []toolCallLocation{{Path: file, Line: 6}},
			})
		},
		func() error { return t.state(ctx, "requires_action") },
	)
	if err != nil {
		return err
	}

	var perm requestPermissionResponse
	err = t.a.conn.Call(ctx, "session/request_permission", t.permission(requestPermissionRequest{
		SessionID:   t.s.id,
		Title:       "Allow editing main.go?",
		Description: "The agent wants to replace one line.",
		Subject: &permissionSubject{Type: "tool_call", ToolCall: toolCallUpdate{
			ToolCallID: edit, Title: "Edit main.go", Kind: "edit", RawInput: rawInput,
		}},
		Options: []permissionOption{
			{OptionID: "allow-once", Name: "Allow once", Kind: "allow_once"},
			{OptionID: "allow-always", Name: "Always allow", Kind: "allow_always"},
			{OptionID: "reject-once", Name: "Reject", Kind: "reject_once"},
		},
	}), &perm)
	if err != nil {
		return err
	}
	if perm.Outcome.Outcome == "cancelled" {
		return errCancelled
	}
	if err := t.state(ctx, "running"); err != nil {
		return err
	}
	allowed := perm.Outcome.Outcome == "selected" && (perm.Outcome.OptionID == "allow-once" || perm.Outcome.OptionID == "allow-always")
	if !allowed {
		return steps(
			func() error {
				return t.update(ctx, toolCallUpdate{
					SessionUpdate: "tool_call_update", ToolCallID: edit, Status: "failed",
					Content:   []any{textContent("Permission denied: main.go was not changed.")},
					RawOutput: map[string]any{"error": "permission denied", "optionId": perm.Outcome.OptionID},
				})
			},
			func() error { return t.plan(ctx, "completed", "cancelled", "cancelled") },
			func() error {
				return t.chunk(ctx, "agent_message_chunk", msg, " Understood, I left main.go unchanged.")
			},
			func() error { return t.usage(ctx) },
		)
	}

	patch := "diff --git a/main.go b/main.go\n--- a/main.go\n+++ b/main.go\n@@ -6 +6 @@\n-" + oldLine + "\n+" + newLine + "\n"
	return steps(
		func() error {
			return t.update(ctx, toolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: edit, Status: "in_progress"})
		},
		func() error {
			return t.update(ctx, toolCallUpdate{
				SessionUpdate: "tool_call_update", ToolCallID: edit, Status: "completed",
				Content: []any{
					diffItem{Type: "diff", Changes: []diffChange{{Operation: "modify", Path: file, FileType: "text", MimeType: "text/x-go"}},
						Patch: &diffPatch{Format: "git_patch", Text: patch}},
					textContent("Replaced \"Helo\" with \"Hello\" on line 6."),
				},
				RawOutput: map[string]any{"linesChanged": 1},
			})
		},
		func() error { return t.plan(ctx, "completed", "completed", "in_progress") },
		func() error {
			return t.update(ctx, toolCallUpdate{
				SessionUpdate: "tool_call_update", ToolCallID: test, Name: "run_command",
				Title: "go test ./...", Kind: "execute", Status: "in_progress",
				RawInput: map[string]any{"command": "go test ./...", "cwd": t.s.cwd},
			})
		},
		func() error {
			return t.update(ctx, toolCallUpdate{
				SessionUpdate: "tool_call_update", ToolCallID: test, Status: "completed",
				Content:   []any{textContent("ok  \texample.com/hello\t0.012s")},
				RawOutput: map[string]any{"exitCode": 0, "stdout": "ok  \texample.com/hello\t0.012s\n"},
			})
		},
		func() error { return t.plan(ctx, "completed", "completed", "completed") },
		func() error {
			return t.chunk(ctx, "agent_message_chunk", msg, " Done: the program now prints \"Hello, world!\" and the tests pass.")
		},
		func() error { return t.usage(ctx) },
	)
}

// explainTurn: read the file and explain it, no permission needed.
func (t *turn) explainTurn(ctx context.Context) error {
	thought := fmt.Sprintf("thought-%d", t.n)
	msg := fmt.Sprintf("agent-%d", t.n)
	file := filepath.Join(t.s.cwd, "main.go")
	read := fmt.Sprintf("call_%d_read", t.n)
	source := "package main\n\nimport \"fmt\"\n\nfunc main() {\n" + newLine + "\n}\n"
	return steps(
		func() error { return t.state(ctx, "running") },
		func() error {
			return t.chunk(ctx, "agent_thought_chunk", thought, "Let me re-read main.go before answering.")
		},
		func() error {
			return t.update(ctx, toolCallUpdate{
				SessionUpdate: "tool_call_update", ToolCallID: read, Name: "read_file",
				Title: "Read main.go", Kind: "read", Status: "in_progress",
				RawInput: map[string]any{"path": file}, Locations: []toolCallLocation{{Path: file}},
			})
		},
		func() error {
			return t.update(ctx, toolCallUpdate{
				SessionUpdate: "tool_call_update", ToolCallID: read, Status: "completed",
				Content: []any{textContent(source)}, RawOutput: map[string]any{"bytes": len(source)},
			})
		},
		func() error {
			return t.chunk(ctx, "agent_message_chunk", msg, "`main.go` has a single `main` function ")
		},
		func() error {
			return t.chunk(ctx, "agent_message_chunk", msg, "that prints \"Hello, world!\" with `fmt.Println`.")
		},
		func() error { return t.usage(ctx) },
	)
}

// permission is the request in the connection's dialect.
func (t *turn) permission(r requestPermissionRequest) any {
	if t.v1 {
		return v1Permission(r)
	}
	return r
}

func finalStatus(stopReason string) string {
	if stopReason == "cancelled" {
		return "cancelled"
	}
	return "failed"
}
