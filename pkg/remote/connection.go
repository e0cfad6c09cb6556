package remote

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/version"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/kubeconfig"
)

// Options configures a Connection.
type Options struct {
	// UserAgent is the user agent of every request.
	UserAgent string
	// QPS and Burst are the client-side rate limit of the whole
	// connection: one token bucket for every client, cache and probe built
	// on it.
	QPS   float32
	Burst int
	// Timeout bounds every request sent with HTTPClient; 0 for none.
	Timeout time.Duration
	// Wrap, when set, adjusts the REST config before the clients are
	// built, e.g. to wrap the transport (tests count requests with it).
	Wrap func(*rest.Config)
}

// Connection is the connection to one remote cluster through one
// kubeconfig.
type Connection struct {
	// Config is the REST config of the kubeconfig's current context with
	// the user agent, the rate limiter and the recording of the health.
	Config *rest.Config
	// Namespace is the namespace of the kubeconfig's current context.
	Namespace string
	// HTTPClient sends requests, each within Options.Timeout.
	HTTPClient *http.Client
	// StreamClient shares the transport of HTTPClient but has no timeout,
	// which would cut every watch stream after that long.
	StreamClient *http.Client

	sum     [sha256.Size]byte
	health  health
	caching caching
}

// Dial builds the connection of kubeconfig data without contacting the
// cluster. A kubeconfig that cannot be used is kubeconfig.ErrInvalid.
func Dial(data []byte, o Options) (*Connection, error) {
	cfg, namespace, err := kubeconfig.Parse(data)
	if err != nil {
		return nil, err
	}
	c := &Connection{Config: cfg, Namespace: namespace, sum: sha256.Sum256(data)}
	cfg.UserAgent = o.UserAgent
	cfg.QPS, cfg.Burst = o.QPS, o.Burst
	cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(o.QPS, o.Burst)
	if o.Wrap != nil {
		o.Wrap(cfg)
	}
	// After Wrap, which may replace the transport wrapper.
	cfg.Wrap(c.health.wrap)
	if c.StreamClient, err = rest.HTTPClientFor(cfg); err != nil {
		return nil, fmt.Errorf("%w: failed to build an HTTP client: %w", kubeconfig.ErrInvalid, err)
	}
	c.HTTPClient = &http.Client{Transport: c.StreamClient.Transport, Jar: c.StreamClient.Jar, Timeout: o.Timeout}
	return c, nil
}

// Of reports whether the connection was built from kubeconfig data.
func (c *Connection) Of(data []byte) bool {
	return c.sum == sha256.Sum256(data)
}

// Health returns what the connection's requests saw last.
func (c *Connection) Health() Health {
	return c.health.state()
}

// Check returns an error wrapping ErrUnreachable while the last request
// found the cluster unreachable less than the retry window (10 s) ago;
// name names the cluster in it. A caller that gets it should not send a
// request: the first one after the window tries again.
func (c *Connection) Check(name string) error {
	return c.health.check(name)
}

// Close closes the idle connections of the transport.
func (c *Connection) Close() {
	c.HTTPClient.CloseIdleConnections()
}

// Version asks the cluster for its version (GET /version) over HTTPClient,
// so within Options.Timeout, under the connection's rate limit and
// recorded in its health.
func (c *Connection) Version(ctx context.Context) (*version.Info, error) {
	cfg := rest.CopyConfig(c.Config)
	cfg.GroupVersion, cfg.APIPath = nil, ""
	cfg.NegotiatedSerializer = clientgoscheme.Codecs.WithoutConversion()
	rc, err := rest.UnversionedRESTClientForConfigAndClient(cfg, c.HTTPClient)
	if err != nil {
		return nil, fmt.Errorf("failed to build the client of GET /version: %w", err)
	}
	body, err := rc.Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		return nil, err
	}
	var info version.Info
	if err := json.Unmarshal(body, &info); err != nil {
		return nil, fmt.Errorf("the answer to GET /version is not a version: %w", err)
	}
	return &info, nil
}
