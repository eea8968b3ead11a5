package aep

import "time"

// sess is what the mapper tracks of one ACP session on this connection.
//
// Memory grows with what is open (runs, tool calls, attention requests
// and the requests awaiting a response), not with the session's length:
// what an entity needs is released when its last event is written. Two
// sets remember finished things for late messages, as ids only: toolsDone
// (a late update of a finished tool call is x.acp.tool_call.update, never
// a second tool.requested or terminal) and compacted (session.compacted
// once per compactionId).
type sess struct {
	id     string
	source string // the events' source (sourceOf)
	epoch  int64
	seq    int64
	// ids remembers event ids by key for subject and cause, while an event
	// may still name them: "run:<id>" until the run's terminal,
	// "tool:<id>" until the tool's terminal, "att:<request>" and
	// "attlast:<request>" until the request's response (a request
	// dismissed by a close or shutdown may still be answered late).
	ids map[string]string

	openRun   string
	runs      map[string]time.Time // open runs → start time
	unbound   []*prompt            // v2: prompts not yet bound to a run
	agentRuns int                  // v2: runs the agent started on its own
	state     string               // v2: idle, running, requires_action

	tools     map[string]*tool      // tool calls without a terminal yet
	toolsDone map[string]struct{}   // tool calls with a terminal: ids only
	attention map[string]*attention // pending requests by request key
	attOrder  []string              // the keys of attention, in the order raised
	compacted map[string]bool       // compactionIds seen completed: ids only
	replaying int                   // session/load or session/resume requests awaiting their response
	opened    bool                  // session.started was written on this connection
	ended     bool
}

func newSess(id string) *sess {
	return &sess{id: id, ids: map[string]string{}, runs: map[string]time.Time{}, state: "idle",
		tools: map[string]*tool{}, toolsDone: map[string]struct{}{}, attention: map[string]*attention{},
		compacted: map[string]bool{}}
}

// prompt is a session/prompt request (v2: awaiting the run it starts).
type prompt struct {
	rpcID  string
	at     time.Time
	params obj
}

// tool is a tool call seen in the session, until its terminal.
type tool struct {
	name string
	at   time.Time
}

// finishTool forgets a tool call's details once it has its terminal; only
// its id stays, in toolsDone.
func (st *sess) finishTool(id string) {
	delete(st.tools, id)
	st.toolsDone[id] = struct{}{}
}

// attention is an attention request awaiting its outcome.
type attention struct {
	key    string
	kind   string
	at     time.Time
	fields []formField
}
