package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"golang.org/x/sync/semaphore"

	admissionv1 "k8s.io/api/admission/v1"
	admissionv1beta1 "k8s.io/api/admission/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// MaxReviewBytes bounds the body of one AdmissionReview. An UPDATE carries
// the object twice, each at most the 1.5 MiB etcd stores by default; the
// rest of a review is small.
const MaxReviewBytes = 4 << 20

// uidScanBytes is how far into a review the uid is looked for when the
// review is not decoded (throttled, too large, not decodable). An API
// server writes it first.
const uidScanBytes = 64 << 10

// reviewCodecs decode AdmissionReviews of v1 and v1beta1.
var reviewCodecs = func() serializer.CodecFactory {
	scheme := runtime.NewScheme()
	if err := admissionv1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	if err := admissionv1beta1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	return serializer.NewCodecFactory(scheme)
}()

// reviewServer serves AdmissionReviews to hook: at most as many at once as
// its limiter admits, each body at most MaxReviewBytes, and every answer a
// review carrying the request's uid, also when the review is refused
// before it is decoded (then the uid is read from its first bytes).
type reviewServer struct {
	hook    *admission.Webhook
	limiter *limiter
}

// ServeHTTP implements http.Handler.
func (s *reviewServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), s.limiter.wait)
	defer cancel()
	// Bodies are read as soon as the byte budget holds them: over HTTP/2
	// an unread body holds the connection's flow-control window, and
	// reviews waiting unread would keep the running ones from reading
	// theirs.
	reserved, ok := s.limiter.reserve(ctx, r.ContentLength)
	if !ok {
		s.throttle(w, scanUID(io.LimitReader(r.Body, uidScanBytes)))
		return
	}
	defer s.limiter.unreserve(reserved)
	body, err := readBody(r)
	if !s.limiter.acquire(ctx) {
		s.throttle(w, scanUID(bytes.NewReader(body)))
		return
	}
	defer s.limiter.release()
	req, resp := decodeReview(r, body, err)
	if resp != nil {
		writeReview(w, nil, *resp)
		return
	}
	answer := s.hook.Handle(r.Context(), admission.Request{AdmissionRequest: *req.Request})
	writeReview(w, req, answer.AdmissionResponse)
}

// throttle answers a review that found no room within the wait.
func (s *reviewServer) throttle(w http.ResponseWriter, uid types.UID) {
	throttled.Inc()
	writeReview(w, nil, refusal(uid, http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests, "too many concurrent admissions, retry"))
}

// decodeReview decodes the review of r (body and the error of reading it),
// or returns the refusal of one that is too large, not JSON, not
// decodable or without a uid.
func decodeReview(r *http.Request, body []byte, err error) (*admissionv1.AdmissionReview, *admissionv1.AdmissionResponse) {
	switch {
	case errors.Is(err, errTooLarge):
		return nil, ptrTo(refusal(scanUID(bytes.NewReader(body)), http.StatusRequestEntityTooLarge, metav1.StatusReasonRequestEntityTooLarge,
			fmt.Sprintf("the AdmissionReview is larger than %d bytes", MaxReviewBytes)))
	case err != nil:
		return nil, ptrTo(refusal(scanUID(bytes.NewReader(body)), http.StatusBadRequest, metav1.StatusReasonBadRequest,
			"failed to read the AdmissionReview: "+err.Error()))
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		return nil, ptrTo(refusal(scanUID(bytes.NewReader(body)), http.StatusBadRequest, metav1.StatusReasonBadRequest,
			fmt.Sprintf("Content-Type %q, want application/json", ct)))
	}
	review := &admissionv1.AdmissionReview{Request: &admissionv1.AdmissionRequest{}}
	// A v1beta1 review decodes into the v1 type (they are the same);
	// the answer keeps the version asked in.
	into := &versionedReview{AdmissionReview: *review}
	into.SetGroupVersionKind(admissionv1.SchemeGroupVersion.WithKind("AdmissionReview"))
	if _, gvk, err := reviewCodecs.UniversalDeserializer().Decode(body, nil, into); err != nil {
		return nil, ptrTo(refusal(scanUID(bytes.NewReader(body)), http.StatusBadRequest, metav1.StatusReasonBadRequest,
			"failed to decode the AdmissionReview: "+err.Error()))
	} else if gvk != nil {
		into.SetGroupVersionKind(*gvk)
	}
	review = &into.AdmissionReview
	if review.Request == nil || review.Request.UID == "" {
		return nil, ptrTo(refusal("", http.StatusBadRequest, metav1.StatusReasonBadRequest,
			"the AdmissionReview has no request.uid; an API server always sends one"))
	}
	return review, nil
}

// versionedReview decodes v1 and v1beta1 AdmissionReviews into one type.
type versionedReview struct {
	admissionv1.AdmissionReview
}

// DeepCopyObject implements runtime.Object; the decoder never calls it.
func (v *versionedReview) DeepCopyObject() runtime.Object {
	return &versionedReview{AdmissionReview: *v.DeepCopy()}
}

var errTooLarge = errors.New("too large")

// readBody reads at most MaxReviewBytes of r's body; over that it returns
// what it read and errTooLarge.
func readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength > MaxReviewBytes {
		head, _ := io.ReadAll(io.LimitReader(r.Body, uidScanBytes))
		return head, errTooLarge
	}
	buf := bytes.NewBuffer(make([]byte, 0, max(r.ContentLength, 0)+1))
	n, err := buf.ReadFrom(io.LimitReader(r.Body, MaxReviewBytes+1))
	if err != nil {
		return buf.Bytes(), err
	}
	if n > MaxReviewBytes {
		return buf.Bytes()[:uidScanBytes], errTooLarge
	}
	return buf.Bytes(), nil
}

// refusal is a denial with an HTTP status code, for reviews refused
// before they reach a handler.
func refusal(uid types.UID, code int32, reason metav1.StatusReason, msg string) admissionv1.AdmissionResponse {
	if uid == "" {
		msg += " (the review has no request.uid, so this answer has none)"
	}
	return admissionv1.AdmissionResponse{UID: uid, Allowed: false, Result: &metav1.Status{
		Status: metav1.StatusFailure, Code: code, Reason: reason, Message: msg,
	}}
}

// writeReview writes resp as an AdmissionReview of the version req came
// in (v1 without req). The HTTP status is 200: an API server reads the
// review's status and tells the client, but gives up on any other.
func writeReview(w http.ResponseWriter, req *admissionv1.AdmissionReview, resp admissionv1.AdmissionResponse) {
	gvk := admissionv1.SchemeGroupVersion.WithKind("AdmissionReview")
	if req != nil && req.GroupVersionKind() != (schema.GroupVersionKind{}) {
		gvk = req.GroupVersionKind()
	}
	out := admissionv1.AdmissionReview{Response: &resp}
	out.SetGroupVersionKind(gvk)
	body, err := json.Marshal(out)
	if err != nil {
		http.Error(w, "failed to encode the AdmissionReview: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(body, '\n')) // a client that went away gets nothing either way
}

// scanUID returns request.uid of a review read from r, token by token
// without decoding the rest (a review too deep, too large or invalid
// further on still yields it), or "" when r has none before its end or
// its first error.
func scanUID(r io.Reader) types.UID {
	dec := json.NewDecoder(r)
	if !enterObject(dec) {
		return ""
	}
	for {
		key, ok := nextKey(dec)
		switch {
		case !ok:
			return ""
		case key != "request":
			if !skipValue(dec) {
				return ""
			}
			continue
		}
		if !enterObject(dec) {
			return ""
		}
		for {
			key, ok := nextKey(dec)
			if !ok {
				return ""
			}
			if key == "uid" {
				tok, err := dec.Token()
				uid, isString := tok.(string)
				if err != nil || !isString {
					return ""
				}
				return types.UID(uid)
			}
			if !skipValue(dec) {
				return ""
			}
		}
	}
}

// enterObject reads the '{' of an object.
func enterObject(dec *json.Decoder) bool {
	tok, err := dec.Token()
	return err == nil && tok == json.Delim('{')
}

// nextKey reads the next key of an object, false at its end.
func nextKey(dec *json.Decoder) (string, bool) {
	tok, err := dec.Token()
	key, ok := tok.(string)
	return key, err == nil && ok
}

// skipValue reads one value, however deep, without keeping it.
func skipValue(dec *json.Decoder) bool {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return true
		}
	}
}

func ptrTo[T any](v T) *T { return &v }

// limiter admits at most a fixed number of admissions at once, and holds
// the bodies of reviews read and not yet answered within a byte budget; a
// review that finds no room for its body or no slot within wait is turned
// away.
type limiter struct {
	slots chan struct{}
	bytes *semaphore.Weighted
	wait  time.Duration
}

// MaxBufferedBytes bounds the review bodies held at once, running and
// waiting: 6 reviews of MaxReviewBytes, or 780 of 32 KiB.
const MaxBufferedBytes = 24 << 20

func newLimiter(inFlight int, wait time.Duration) *limiter {
	return &limiter{slots: make(chan struct{}, inFlight), bytes: semaphore.NewWeighted(MaxBufferedBytes), wait: wait}
}

// reserve takes room for a body of contentLength bytes (-1: unknown, then
// MaxReviewBytes) until ctx ends; a body over MaxReviewBytes needs none,
// since only its first uidScanBytes are read. It returns what to give
// back to unreserve.
func (l *limiter) reserve(ctx context.Context, contentLength int64) (int64, bool) {
	n := contentLength
	switch {
	case n > MaxReviewBytes:
		return 0, true
	case n < 0:
		n = MaxReviewBytes
	}
	n++ // readBody reads one byte more to tell a body over the limit
	return n, l.bytes.TryAcquire(n) || l.bytes.Acquire(ctx, n) == nil
}

func (l *limiter) unreserve(n int64) {
	if n > 0 {
		l.bytes.Release(n)
	}
}

// acquire takes a slot, free now or until ctx ends; false when none was
// free in time.
func (l *limiter) acquire(ctx context.Context) bool {
	select {
	case l.slots <- struct{}{}:
		return true
	default:
	}
	select {
	case l.slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (l *limiter) release() { <-l.slots }
