package bundle

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/bundle/bundletest"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/mirror"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/registrytest"
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
	refs := make([]string, benchImages)
	for i := range refs {
		refs[i] = fmt.Sprintf("quay.io/kubevirt/bench-%02d:v1", i)
	}
	reg := registrytest.Start(b)
	reg.Serve(b, registrytest.Images(b, refs, benchBaseSize, benchOwnSize))
	items, err := mirror.Pull(b.Context(), refs, reg.Mirrors(), mirror.Options{})
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

// hashFile returns how long SHA-256 over the file at p takes, read from the
// page cache right after it was written: the least any operation that
// checks every byte once must spend.
func hashFile(b *testing.B, p string) time.Duration {
	b.Helper()
	start := time.Now()
	f, err := os.Open(p)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if _, err := io.Copy(sha256.New(), f); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// report adds throughput metrics: the operation's and the plain copy's
// MB/s over b.N runs of bytes each, and their ratio; with hash (the time
// SHA-256 over the same bytes took in the same iterations) also
// hash-only-ratio, the ratio to the copy that hashing each byte once and
// doing nothing else would reach: no operation that checks every byte can
// do better on this machine.
func report(b *testing.B, name string, bytes int64, op, base, hash time.Duration) {
	b.Helper()
	mb := float64(bytes) * float64(b.N) / 1e6
	b.ReportMetric(mb/op.Seconds(), name+"-MB/s")
	b.ReportMetric(mb/base.Seconds(), "copy-MB/s")
	b.ReportMetric(base.Seconds()/op.Seconds(), "ratio-to-copy")
	if hash > 0 {
		b.ReportMetric(base.Seconds()/hash.Seconds(), "hash-only-ratio")
	}
}

// BenchmarkCreate measures bundle creation from an in-process registry
// (pull over loopback, OCI layout, tar) against copying the finished bundle
// on the same disk, and reports the deduplication savings.
func BenchmarkCreate(b *testing.B) {
	items := benchItems(b)
	dir := b.TempDir()
	var op, base, hash time.Duration
	var res *Result
	b.ResetTimer()
	for i := range b.N {
		out := filepath.Join(dir, fmt.Sprintf("bundle-%d.tar", i))
		start := time.Now()
		r, err := Create(b.Context(), CreateOptions{Output: out, Images: items})
		if err != nil {
			b.Fatal(err)
		}
		op += time.Since(start)
		res = r
		base += copyFile(b, out, out+".copy")
		hash += hashFile(b, out)
		b.StopTimer()
		for _, p := range []string{out, out + ".copy", out + ".work"} {
			if err := os.RemoveAll(p); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
	}
	report(b, "create", res.Size, op, base, hash)
	b.ReportMetric(float64(res.ImageBytes)/1e6, "image-MB")
	b.ReportMetric(float64(res.StoredBytes)/1e6, "stored-MB")
	b.ReportMetric(100*float64(res.ImageBytes-res.StoredBytes)/float64(res.ImageBytes), "dedup-saved-%")
}

// BenchmarkPush measures pushing a verified, unpacked bundle into an empty
// in-process registry against copying the bundle file on the same disk.
func BenchmarkPush(b *testing.B) {
	items := benchItems(b)
	dir := b.TempDir()
	file := filepath.Join(dir, "bundle.tar")
	res, err := Create(b.Context(), CreateOptions{Output: file, Images: items})
	if err != nil {
		b.Fatal(err)
	}
	var op, base, hash time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		private := registrytest.Start(b)
		unpacked := filepath.Join(dir, fmt.Sprintf("unpacked-%d", i))
		b.StartTimer()
		start := time.Now()
		if _, err := Extract(file, unpacked, nil); err != nil {
			b.Fatal(err)
		}
		stored, err := Images(unpacked)
		if err != nil {
			b.Fatal(err)
		}
		if err := mirror.Copy(b.Context(), stored, mirror.Registry{Host: private.Host}, mirror.Options{}); err != nil {
			b.Fatal(err)
		}
		op += time.Since(start)
		base += copyFile(b, file, file+".copy")
		hash += hashFile(b, file)
		b.StopTimer()
		if err := os.RemoveAll(unpacked); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	report(b, "push", res.Size, op, base, hash)
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
	keys := bundletest.PKCS8KeyPair(b, dir, "bench")
	signer, err := LoadSigner(keys.Private, nil)
	if err != nil {
		b.Fatal(err)
	}
	key, err := LoadVerifier(keys.Public)
	if err != nil {
		b.Fatal(err)
	}
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
	report(b, "sign", res.Size, sign, base, 0)
	mb := float64(res.Size) * float64(b.N) / 1e6
	b.ReportMetric(mb/verify.Seconds(), "verify-MB/s")
}
