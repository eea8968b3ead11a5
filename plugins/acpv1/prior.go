package acpv1

import "encoding/json"

// countMessages counts the messages of a stored stream (header first):
// each message entity's first record (the one without supersedes), leaving
// out notices and inter-session messages, which are not chunk runs or
// prompts. Derived ids of a later connection continue after them.
func countMessages(lines [][]byte) int {
	n := 0
	for i, line := range lines {
		if i == 0 {
			continue // the header
		}
		var r struct {
			Type       string `json:"type"`
			Supersedes string `json:"supersedes"`
			Origin     string `json:"origin"`
		}
		if json.Unmarshal(line, &r) != nil || r.Type != "message" || r.Supersedes != "" {
			continue
		}
		if r.Origin == "notice" || r.Origin == "inter_session" {
			continue
		}
		n++
	}
	return n
}
