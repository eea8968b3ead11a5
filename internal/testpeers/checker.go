package testpeers

import "github.com/acptap/acptap/internal/acpschema"

// Sender is the side of an ACP connection that wrote a message.
type Sender = acpschema.Sender

const (
	// Client marks messages the client sent to the agent.
	Client = acpschema.Client
	// Agent marks messages the agent sent to the client.
	Agent = acpschema.Agent
)

// Checker validates the messages of one ACP conversation, in order, against
// the official schema (see acpschema.Checker). Test peers use it strictly:
// responses to unknown requests and reused ids are errors.
type Checker = acpschema.Checker

// NewChecker returns a Checker for ACP version v (V1 or V2).
func NewChecker(v Version) (*Checker, error) { return acpschema.NewChecker(v) }
