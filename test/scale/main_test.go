package scale

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

func TestMain(m *testing.M) {
	// The simulator's and the clients' logs would drown the figures.
	ctrllog.SetLogger(logr.Discard())
	os.Exit(m.Run())
}
