package aep

import "time"

// sess is what the mapper tracks of one ACP session on this connection.
type sess struct {
	id    string
	epoch int64
	seq   int64
	// ids remembers event ids by key ("run:<id>", "tool:<id>",
	// "att:<request>", "attlast:<request>") for subject and cause.
	ids map[string]string

	openRun   string
	runs      map[string]time.Time // open runs → start time
	unbound   []*prompt            // v2: prompts not yet bound to a run
	agentRuns int                  // v2: runs the agent started on its own
	state     string               // v2: idle, running, requires_action

	tools     map[string]*tool
	attention map[string]*attention // pending requests by request key
	attOrder  []string
	compacted map[string]bool
	replaying int // session/load or session/resume requests awaiting their response
	ended     bool
}

func newSess(id string) *sess {
	return &sess{id: id, ids: map[string]string{}, runs: map[string]time.Time{}, state: "idle",
		tools: map[string]*tool{}, attention: map[string]*attention{}, compacted: map[string]bool{}}
}

// prompt is a session/prompt request (v2: awaiting the run it starts).
type prompt struct {
	rpcID  string
	at     time.Time
	params obj
}

// tool is a tool call seen in the session.
type tool struct {
	name     string
	at       time.Time
	terminal bool
}

// attention is an attention request awaiting its outcome.
type attention struct {
	key    string
	kind   string
	at     time.Time
	fields []formField
}
