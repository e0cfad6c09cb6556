package mirror

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Defaults and bounds of Options.
const (
	DefaultJobs     = 4
	DefaultAttempts = 3
	DefaultBackoff  = time.Second
	// MaxJobs bounds Jobs: each job holds a connection and its buffers,
	// and a registry throttles one client long before.
	MaxJobs = 64
	// MaxAttempts bounds Attempts: with the backoff capped at MaxBackoff,
	// the last of them starts within about 4 minutes of the first.
	MaxAttempts = 10
	// MaxBackoff caps the doubling wait between two attempts.
	MaxBackoff = 30 * time.Second
)

// Item is one image to copy.
type Item struct {
	// Ref is the image's upstream reference; the copy goes to Ref
	// relocated to the destination registry.
	Ref string
	// Image is the image's content; nil when Index is set.
	Image v1.Image
	// Index is the content of an item that is an image index. It is
	// written as it is, so the registry reports the digest it has here.
	Index v1.ImageIndex
	// Referrers are manifests attached to the item (signatures,
	// attestations, SBOMs), each under its own reference in the item's
	// repository: a cosign tag, or a digest for an OCI referrer, whose
	// subject field points at the item. They are written after the item.
	Referrers []Item
	// FromRegistry is set by the pulls that read the item through
	// go-containerregistry's remote package, whose blob readers fail at the
	// end of a blob whose bytes do not hash to its digest. A consumer may
	// then take a fully read layer as verified instead of hashing it again;
	// every other item (built in memory, read from a file) is hashed.
	FromRegistry bool
}

// Options tune Copy and Pull.
type Options struct {
	// Jobs is how many images are copied at a time, at most MaxJobs; 0 is
	// DefaultJobs.
	Jobs int
	// Attempts is how often an image copy is tried before Copy gives up,
	// at most MaxAttempts; 0 is DefaultAttempts.
	Attempts int
	// Backoff is the wait before the second attempt, doubled for each
	// further one up to MaxBackoff; 0 is DefaultBackoff.
	Backoff time.Duration
	// PlainHTTP talks HTTP instead of HTTPS to the destination registry
	// (loopback and private addresses always use HTTP).
	PlainHTTP bool
	// Transport is the HTTP transport; nil is remote.DefaultTransport.
	Transport http.RoundTripper
	// Progress receives one line per copied image; nil discards them.
	Progress io.Writer
	// Platform selects the image of a multi-platform index when pulling;
	// nil is linux/amd64.
	Platform *v1.Platform
}

// Validate refuses counts and waits out of their range, naming the flag
// of each (--jobs, --attempts); 0 is the default of each.
func (o Options) Validate() error {
	var errs []error
	if o.Jobs < 0 || o.Jobs > MaxJobs {
		errs = append(errs, fmt.Errorf("--jobs %d: must be between 1 and %d", o.Jobs, MaxJobs))
	}
	if o.Attempts < 0 || o.Attempts > MaxAttempts {
		errs = append(errs, fmt.Errorf("--attempts %d: must be between 1 and %d", o.Attempts, MaxAttempts))
	}
	if o.Backoff < 0 {
		errs = append(errs, fmt.Errorf("backoff %s: must not be negative", o.Backoff))
	}
	return errors.Join(errs...)
}

// nextBackoff is the wait after wait: twice as long, at most MaxBackoff.
func nextBackoff(wait time.Duration) time.Duration {
	return min(2*wait, MaxBackoff)
}

func (o Options) withDefaults() Options {
	if o.Jobs <= 0 {
		o.Jobs = DefaultJobs
	}
	if o.Attempts <= 0 {
		o.Attempts = DefaultAttempts
	}
	if o.Backoff <= 0 {
		o.Backoff = DefaultBackoff
	}
	if o.Transport == nil {
		o.Transport = remote.DefaultTransport
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Platform == nil {
		o.Platform = &v1.Platform{OS: "linux", Architecture: "amd64"}
	}
	return o
}

// RemoteOptions are the go-containerregistry options of one request series
// with o's defaults applied.
func (o Options) RemoteOptions(ctx context.Context) []remote.Option {
	return o.withDefaults().remoteOptions(ctx)
}

// remoteOptions are the go-containerregistry options of one request series.
func (o Options) remoteOptions(ctx context.Context) []remote.Option {
	return []remote.Option{
		remote.WithContext(ctx),
		remote.WithTransport(o.Transport),
		remote.WithAuthFromKeychain(authn.DefaultKeychain),
		remote.WithPlatform(*o.Platform),
		remote.WithRetryStatusCodes(http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
			http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout),
		remote.WithRetryBackoff(remote.Backoff{Duration: o.Backoff / 4, Factor: 2, Jitter: 0.1, Steps: 3}),
	}
}

// Copy writes every item to dst under its relocated reference, opts.Jobs
// images at a time. remote.Write asks the registry for each blob first and
// uploads only the missing ones, so a second copy uploads no blob. Each
// image is tried opts.Attempts times; the error names every image that
// failed.
func Copy(ctx context.Context, items []Item, dst Registry, opts Options) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	opts = opts.withDefaults()
	shared, err := newSharedBlobs(items)
	if err != nil {
		return err
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		done int
	)
	slots := make(chan struct{}, opts.Jobs)
	for _, item := range items {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			target, err := copyOne(ctx, item, dst, opts, shared)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			done++
			fmt.Fprintf(opts.Progress, "pushed %d/%d %s -> %s\n", done, len(items), item.Ref, target)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// copyOne writes one item and then its referrers.
func copyOne(ctx context.Context, item Item, dst Registry, opts Options, shared *sharedBlobs) (string, error) {
	target, err := writeOne(ctx, item, dst, opts, shared)
	if err != nil {
		return "", err
	}
	for _, r := range item.Referrers {
		if _, err := writeOne(ctx, r, dst, opts, shared); err != nil {
			return "", fmt.Errorf("failed to push a referrer of %s: %w", item.Ref, err)
		}
	}
	return target, nil
}

// writeOne writes one item's image or index, retrying, after the layers it
// shares with other items.
func writeOne(ctx context.Context, item Item, dst Registry, opts Options, shared *sharedBlobs) (string, error) {
	target, err := dst.Relocate(item.Ref)
	if err != nil {
		return "", err
	}
	var nameOpts []name.Option
	if opts.PlainHTTP {
		nameOpts = append(nameOpts, name.Insecure)
	}
	ref, err := name.ParseReference(target, nameOpts...)
	if err != nil {
		return "", fmt.Errorf("failed to parse image %q: %w", target, err)
	}
	wait := opts.Backoff
	for attempt := 1; ; attempt++ {
		ropts := opts.remoteOptions(ctx)
		if err = shared.upload(ctx, item, ref.Context(), ropts); err == nil {
			err = writeItem(ref, item, ropts)
		}
		if err == nil {
			return target, nil
		}
		if attempt >= opts.Attempts || ctx.Err() != nil {
			return "", fmt.Errorf("failed to push %s to %s after %d attempts: %w", item.Ref, target, attempt, err)
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("failed to push %s to %s: %w", item.Ref, target, ctx.Err())
		case <-time.After(wait):
		}
		wait = nextBackoff(wait)
	}
}

// writeItem writes an item's index or image.
func writeItem(ref name.Reference, item Item, ropts []remote.Option) error {
	if item.Index != nil {
		return remote.WriteIndex(ref, item.Index, ropts...)
	}
	return remote.Write(ref, item.Image, ropts...)
}

// Pull returns the images of refs from their upstream registries, or from
// the mirrors m names. Only manifests and configs are fetched here; layers
// are read when the images are written.
func Pull(ctx context.Context, refs []string, m Mirrors, opts Options) ([]Item, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	items := make([]Item, 0, len(refs))
	for _, ref := range refs {
		src, err := m.Source(ref)
		if err != nil {
			return nil, err
		}
		img, err := remote.Image(src, opts.remoteOptions(ctx)...)
		if err != nil {
			return nil, fmt.Errorf("failed to pull %s from %s: %w", ref, src, err)
		}
		items = append(items, Item{Ref: ref, Image: img, FromRegistry: true})
	}
	return items, nil
}
