package bundle

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/mirror"
)

// Benchmark image set: 20 images that share a 4 MiB base layer and have a
// 1 MiB layer of their own, the shape of the KubeVirt and CDI images built
// on one base.
const (
	benchImages   = 20
	benchBaseSize = 4 << 20
	benchOwnSize  = 1 << 20
)

func benchItems(b *testing.B) []mirror.Item {
	b.Helper()
	src := serveBench(b)
	items, err := mirror.Pull(b.Context(), src.refs, src.reg.Mirrors(), mirror.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return items
}

// copyFile copies src to dst and returns how long it took: the baseline of
// writing the same bytes on the same disk.
func copyFile(b *testing.B, src, dst string) time.Duration {
	b.Helper()
	start := time.Now()
	in, err := os.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = in.Close() }()
	out, err := os.Create(dst)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		b.Fatal(err)
	}
	if err := out.Close(); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// report adds throughput metrics: the operation's and the plain copy's
// MB/s over b.N runs of bytes each, and their ratio.
func report(b *testing.B, name string, bytes int64, op, base time.Duration) {
	b.Helper()
	mb := float64(bytes) * float64(b.N) / 1e6
	b.ReportMetric(mb/op.Seconds(), name+"-MB/s")
	b.ReportMetric(mb/base.Seconds(), "copy-MB/s")
	b.ReportMetric(base.Seconds()/op.Seconds(), "ratio-to-copy")
}

// BenchmarkSignAndVerify measures signing an existing bundle, which
// rewrites it while checking every file, and verifying it with the key,
// each against copying the bundle file on the same disk.
func BenchmarkSignAndVerify(b *testing.B) {
	items := benchItems(b)
	dir := b.TempDir()
	file := filepath.Join(dir, "bundle.tar")
	res, err := Create(b.Context(), CreateOptions{Output: file, Images: items})
	if err != nil {
		b.Fatal(err)
	}
	signing, verifying := benchSigner(b)
	signer, key := signing.Signer, verifying.Key
	var sign, verify, base time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if _, err := Sign(file, signer); err != nil {
			b.Fatal(err)
		}
		sign += time.Since(start)
		start = time.Now()
		if _, err := Read(file, ReadOptions{Key: key}); err != nil {
			b.Fatal(err)
		}
		verify += time.Since(start)
		base += copyFile(b, file, file+".copy")
	}
	report(b, "sign", res.Size, sign, base)
	mb := float64(res.Size) * float64(b.N) / 1e6
	b.ReportMetric(mb/verify.Seconds(), "verify-MB/s")
}
