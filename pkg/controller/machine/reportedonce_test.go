package machine

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// TestReportedOnce: a migration is first once per VMI and infra node;
// another node or VMI is a migration of its own, and the memo stays
// within its bound.
func TestReportedOnce(t *testing.T) {
	var m reportedOnce[migrationKey]
	a := migrationKey{vmi: "uid-a", node: "infra-1"}
	if !m.first(a) || m.first(a) {
		t.Fatal("the same migration is not reported exactly once")
	}
	if !m.first(migrationKey{vmi: "uid-a", node: "infra-2"}) || !m.first(migrationKey{vmi: "uid-b", node: "infra-1"}) {
		t.Fatal("another infra node or VMI is not a migration of its own")
	}
	for i := range 2 * maxReported {
		m.first(migrationKey{vmi: types.UID(fmt.Sprint(i)), node: "infra-1"})
	}
	if n := len(m.seen); n > maxReported {
		t.Errorf("the memo holds %d migrations, more than %d", n, maxReported)
	}
}
