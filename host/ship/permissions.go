package ship

// Permissions are the subjects an origin needs, and no more: it publishes
// under its own name only, reads the stream's info and the last message of
// its own subjects (to resynchronise), and receives replies on its inbox.
// A team's server config grants exactly these to each origin's user (see
// docs/team-store.md); the collector's user needs the stream and consumer
// APIs as well.
type Permissions struct {
	Publish   []string
	Subscribe []string
}

// OriginPermissions lists what origin's user must be allowed.
func OriginPermissions(prefix, stream, origin string) Permissions {
	own := prefix + "." + Token(origin) + ".>"
	return Permissions{
		Publish: []string{
			own,
			"$JS.API.STREAM.INFO." + stream,
			"$JS.API.DIRECT.GET." + stream + "." + own,
		},
		Subscribe: []string{"_INBOX.>"},
	}
}
