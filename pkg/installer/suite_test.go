package installer

import (
	"bytes"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp/cmpopts"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/components"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/images"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/readiness"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
)

// testEnv is the API server of this package's integration tests and
// testClient reaches it with the installer's scheme, both set once a test
// asked for the cluster (requireEnv).
var (
	testEnv    *envtest.Env
	testClient ctrlruntimeclient.Client
	cluster    = envtest.NewShared(func(env *envtest.Env) error {
		c, err := NewClient(env.Config)
		testEnv, testClient = env, c
		return err
	}, envtest.WithControllerManager(), envtest.WithCRDFiles())
)

func TestMain(m *testing.M) { envtest.Main(m, cluster) }

// requireEnv starts the shared API server on first use and returns it; it
// skips the test when SKIP_ENVTEST=true.
func requireEnv(t *testing.T) *envtest.Env {
	t.Helper()
	return cluster.Env(t)
}

// syncBuffer is a bytes.Buffer safe for a writer and concurrent readers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if os.Getenv("DEBUG_TS") != "" {
		b.buf.WriteString(time.Now().Format("05.000 "))
	}
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testPoller polls fast; the timeout only bounds a broken test.
var testPoller = readiness.Poller{Interval: 20 * time.Millisecond, Timeout: 30 * time.Second}

func newInstaller(t *testing.T, env *envtest.Env, releases []components.Release, out *syncBuffer) *Installer {
	t.Helper()
	inst, err := New(env.Config, releases, out, nil, testPoller)
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

func defaultReleases(t *testing.T) []components.Release {
	t.Helper()
	releases, err := components.Load(components.Default())
	if err != nil {
		t.Fatal(err)
	}
	return releases
}

// withOlderKubeVirt returns releases with KubeVirt one minor version older,
// as an installation of the previous installer release would have it.
func withOlderKubeVirt(releases []components.Release) []components.Release {
	out := slices.Clone(releases)
	for i, r := range out {
		if r.Name != "kubevirt" {
			continue
		}
		ch := *r.Chart
		md := *ch.Metadata
		md.Version, md.AppVersion = "0.0.9", "v1.8.4"
		ch.Metadata = &md
		r.Chart = &ch
		r.Version = "v1.8.4"
		r.Images = images.KubeVirt("quay.io/kubevirt", "v1.8.4")
		out[i] = r
	}
	return out
}

var cmpSorted = cmpopts.SortSlices(func(a, b string) bool { return a < b })
