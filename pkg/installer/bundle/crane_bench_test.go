package bundle

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	cranecmd "github.com/google/go-containerregistry/cmd/crane/cmd"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/bundle/bundletest"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/mirror"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/registrytest"
)

// benchSource is the benchmark image set served by an in-process registry.
type benchSource struct {
	reg *registrytest.Registry
	// refs are the upstream references, as a bundle is created from them.
	refs []string
	// local are the same images under the registry's own address, as
	// crane is given them.
	local []string
}

// serveBench serves the benchmark images in a new in-process registry.
func serveBench(b *testing.B) benchSource {
	b.Helper()
	s := benchSource{reg: registrytest.Start(b)}
	for i := range benchImages {
		s.refs = append(s.refs, fmt.Sprintf("quay.io/kubevirt/bench-%02d:v1", i))
		s.local = append(s.local, fmt.Sprintf("%s/quay.io/kubevirt/bench-%02d:v1", s.reg.Host, i))
	}
	s.reg.Serve(b, registrytest.Images(b, s.refs, benchBaseSize, benchOwnSize))
	return s
}

// runCrane runs the crane command line in-process, a new root command for
// each run because crane's root accumulates options as it runs.
func runCrane(b *testing.B, args ...string) time.Duration {
	b.Helper()
	root := cranecmd.New("crane", "crane", nil)
	root.SetArgs(args)
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	start := time.Now()
	if err := root.ExecuteContext(b.Context()); err != nil {
		b.Fatalf("crane %v: %v", args, err)
	}
	return time.Since(start)
}

// benchSigner is a signer and its verifier for the benchmarks, which sign
// and check bundles as a release does.
func benchSigner(b *testing.B) (CreateOptions, ReadOptions) {
	b.Helper()
	keys := bundletest.PKCS8KeyPair(b, b.TempDir(), "bench")
	signer, err := LoadSigner(keys.Private, nil)
	if err != nil {
		b.Fatal(err)
	}
	key, err := LoadVerifier(keys.Public)
	if err != nil {
		b.Fatal(err)
	}
	return CreateOptions{Signer: signer}, ReadOptions{Key: key}
}

// sideBySide runs ours and theirs once each, in an order that alternates
// with i so that neither always runs on a warmer cache, and returns their
// times.
func sideBySide(i int, ours, theirs func() time.Duration) (time.Duration, time.Duration) {
	if i%2 == 0 {
		o := ours()
		return o, theirs()
	}
	t := theirs()
	return ours(), t
}

// pairs are the times of ours and crane's runs, paired by iteration.
type pairs struct{ ours, crane []time.Duration }

func (p *pairs) add(ours, crane time.Duration) {
	p.ours, p.crane = append(p.ours, ours), append(p.crane, crane)
}

// report adds the headline metrics: our and crane's milliseconds per run,
// ratio-to-crane, our total time over crane's, and ratio-median, the
// median over the iterations of our time over crane's in the same
// iteration, which a burst of load on a shared machine moves less.
func (p *pairs) report(b *testing.B, name string) {
	b.Helper()
	var ours, crane time.Duration
	ratios := make([]float64, len(p.ours))
	for i := range p.ours {
		ours, crane = ours+p.ours[i], crane+p.crane[i]
		ratios[i] = p.ours[i].Seconds() / p.crane[i].Seconds()
	}
	n := float64(len(p.ours))
	b.ReportMetric(float64(ours.Milliseconds())/n, name+"-ms")
	b.ReportMetric(float64(crane.Milliseconds())/n, "crane-ms")
	b.ReportMetric(ours.Seconds()/crane.Seconds(), "ratio-to-crane")
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "ratio-median")
}

// removeAll removes every path.
func removeAll(b *testing.B, paths ...string) {
	b.Helper()
	for _, p := range paths {
		if err := os.RemoveAll(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreate measures bundle create (pull with referrers, layout,
// SBOM, signature, tar) against crane pull --format=oci of the same images
// from the same registry, and reports the deduplication savings.
func BenchmarkCreate(b *testing.B) {
	src := serveBench(b)
	sign, _ := benchSigner(b)
	dir := b.TempDir()
	var p pairs
	var res *Result
	b.ResetTimer()
	for i := range b.N {
		out := filepath.Join(dir, fmt.Sprintf("bundle-%d.tar", i))
		layout := filepath.Join(dir, fmt.Sprintf("crane-%d", i))
		o, c := sideBySide(i, func() time.Duration {
			start := time.Now()
			items, err := Pull(b.Context(), src.refs, src.reg.Mirrors(), PullOptions{Referrers: true})
			if err != nil {
				b.Fatal(err)
			}
			opts := sign
			opts.Output, opts.Images = out, items
			if res, err = Create(b.Context(), opts); err != nil {
				b.Fatal(err)
			}
			return time.Since(start)
		}, func() time.Duration {
			return runCrane(b, append(append([]string{"pull", "--format=oci"}, src.local...), layout)...)
		})
		p.add(o, c)
		b.StopTimer()
		removeAll(b, out, out+".work", layout)
		b.StartTimer()
	}
	p.report(b, "create")
	b.ReportMetric(float64(res.ImageBytes)/1e6, "image-MB")
	b.ReportMetric(float64(res.StoredBytes)/1e6, "stored-MB")
	b.ReportMetric(100*float64(res.ImageBytes-res.StoredBytes)/float64(res.ImageBytes), "dedup-saved-%")
}

// BenchmarkPush measures bundle push (verify the signature and every file,
// unpack, push) into an empty in-process registry against crane push of
// the same images, one single-image OCI layout each as crane push takes
// them, into another empty one.
func BenchmarkPush(b *testing.B) {
	src := serveBench(b)
	sign, verify := benchSigner(b)
	dir := b.TempDir()
	items, err := Pull(b.Context(), src.refs, src.reg.Mirrors(), PullOptions{Referrers: true})
	if err != nil {
		b.Fatal(err)
	}
	file := filepath.Join(dir, "bundle.tar")
	sign.Output, sign.Images = file, items
	if _, err := Create(b.Context(), sign); err != nil {
		b.Fatal(err)
	}
	layouts := make([]string, len(src.local))
	for i, ref := range src.local {
		layouts[i] = filepath.Join(dir, fmt.Sprintf("crane-%02d", i))
		runCrane(b, "pull", "--format=oci", ref, layouts[i])
	}
	var p pairs
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		dstOurs, dstCrane := registrytest.Start(b), registrytest.Start(b)
		unpacked := filepath.Join(dir, fmt.Sprintf("unpacked-%d", i))
		b.StartTimer()
		o, c := sideBySide(i, func() time.Duration {
			start := time.Now()
			opts := verify
			opts.Dir = unpacked
			if _, err := Read(file, opts); err != nil {
				b.Fatal(err)
			}
			stored, err := Images(unpacked)
			if err != nil {
				b.Fatal(err)
			}

			if err := mirror.Copy(b.Context(), stored, mirror.Registry{Host: dstOurs.Host}, mirror.Options{}); err != nil {
				b.Fatal(err)
			}

			return time.Since(start)
		}, func() time.Duration {
			var d time.Duration
			for j, l := range layouts {
				d += runCrane(b, "push", l, fmt.Sprintf("%s/kubevirt/bench-%02d:v1", dstCrane.Host, j))
			}
			return d
		})
		p.add(o, c)
		b.StopTimer()
		removeAll(b, unpacked)
		b.StartTimer()
	}
	p.report(b, "push")
}
