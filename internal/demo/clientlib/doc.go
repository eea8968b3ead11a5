// Package clientlib is acptap's scripted example ACP v2 client (schema
// 2.0.0-alpha.9), standard library only. Run spawns an agent command (any
// argv, so a recorder can sit in between), RunConn drives an agent over a
// reader/writer pair; both do initialize, session/new with MCP servers whose
// env, headers and args carry recognisable secrets, the prompts, answer
// permission requests and form elicitations, session/close, and return a
// Summary of what the agent sent.
package clientlib
