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
	// The body stays unread until a slot is free, so a waiting review
	// holds no more memory than the connection's buffers.
	if !s.limiter.acquire(r.Context()) {
		throttled.Inc()
		uid := scanUID(io.LimitReader(r.Body, uidScanBytes))
		writeReview(w, nil, refusal(uid, http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests,
			"too many concurrent admissions, retry"))
		return
	}
	defer s.limiter.release()
	req, resp := decodeReview(r)
	if resp != nil {
		writeReview(w, nil, *resp)
		return
	}
	answer := s.hook.Handle(r.Context(), admission.Request{AdmissionRequest: *req.Request})
	writeReview(w, req, answer.AdmissionResponse)
}

// decodeReview reads and decodes the review of r, or returns the refusal
// of one that is too large, not JSON, not decodable or without a uid.
func decodeReview(r *http.Request) (*admissionv1.AdmissionReview, *admissionv1.AdmissionResponse) {
	body, err := readBody(r)
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
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out) // a client that went away gets nothing either way
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

// limiter admits at most a fixed number of admissions at once; one that
// cannot start within wait is turned away.
type limiter struct {
	slots chan struct{}
	wait  time.Duration
}

func newLimiter(inFlight int, wait time.Duration) *limiter {
	return &limiter{slots: make(chan struct{}, inFlight), wait: wait}
}

// acquire takes a slot, waiting at most l.wait; false when none was free
// in time or ctx ended.
func (l *limiter) acquire(ctx context.Context) bool {
	select {
	case l.slots <- struct{}{}:
		return true
	default:
	}
	timer := time.NewTimer(l.wait)
	defer timer.Stop()
	select {
	case l.slots <- struct{}{}:
		return true
	case <-timer.C:
		return false
	case <-ctx.Done():
		return false
	}
}

func (l *limiter) release() { <-l.slots }
