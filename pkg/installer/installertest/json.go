package installertest

import (
	"encoding/json"
	"reflect"
)

// equalJSON compares two JSON-like values after a JSON round trip, so
// integer types do not matter.
func equalJSON(a, b any) bool {
	var x, y any
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	if errA != nil || errB != nil {
		return false
	}
	if json.Unmarshal(ja, &x) != nil || json.Unmarshal(jb, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
