package setups

import (
	"encoding/json"

	"gvs/bench/probe"
)

// pingAllReplied reports whether a _ping report shows every request
// answered.
func pingAllReplied(out string) bool {
	var r probe.PingResult
	return json.Unmarshal([]byte(out), &r) == nil && r.Sent > 0 && r.Received == r.Sent
}
