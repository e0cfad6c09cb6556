package webhook

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// serve posts body to a reviewServer of the validating handler with
// slots and returns the review it answered.
func serve(t *testing.T, slots *limiter, body io.Reader, contentLength int64) admissionv1.AdmissionReview {
	t.Helper()
	_, v := handlers(t, fakeProvider{})
	s := &reviewServer{hook: &admission.Webhook{Handler: v}, limiter: slots}
	req := httptest.NewRequest(http.MethodPost, ValidatePath, body)
	req.Header.Set("Content-Type", "application/json")
	req.ContentLength = contentLength
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("HTTP status %d, want 200 (an API server reads no review otherwise)", rec.Code)
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &review); err != nil || review.Response == nil {
		t.Fatalf("the answer is no AdmissionReview: %v: %s", err, rec.Body.String())
	}
	return review
}

// reviewBody is an AdmissionReview of a valid MachineDeployment with uid;
// object replaces the object when not empty.
func reviewBody(t *testing.T, uid, object string) []byte {
	t.Helper()
	if object == "" {
		md, err := json.Marshal(deployment(validSpec, nil))
		if err != nil {
			t.Fatal(err)
		}
		object = string(md)
	}
	return []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"` + uid + `",` +
		`"kind":{"group":"cluster.k8s.io","version":"v1alpha1","kind":"MachineDeployment"},"name":"md","namespace":"kube-system",` +
		`"operation":"CREATE","object":` + object + `}}`)
}

// wantRefusal checks that review refuses with uid, code and a message
// containing msg.
func wantRefusal(t *testing.T, review admissionv1.AdmissionReview, uid string, code int32, msg string) {
	t.Helper()
	r := review.Response
	if string(r.UID) != uid || r.Allowed || r.Result == nil || r.Result.Code != code || !strings.Contains(r.Result.Message, msg) {
		t.Fatalf("answer uid %q allowed %v result %+v, want uid %q refused with %d and %q", r.UID, r.Allowed, r.Result, uid, code, msg)
	}
}

// TestReviewAnswered: a review with a free slot reaches the handler and
// is answered with its uid, in the version it came in.
func TestReviewAnswered(t *testing.T) {
	review := serve(t, newLimiter(1, time.Millisecond), bytes.NewReader(reviewBody(t, "u-1", "")), -1)
	if review.Response.UID != "u-1" || !review.Response.Allowed || review.APIVersion != "admission.k8s.io/v1" {
		t.Fatalf("answer %+v, %s: want uid u-1 allowed, admission.k8s.io/v1", review.Response, review.APIVersion)
	}
	beta := bytes.Replace(reviewBody(t, "u-2", ""), []byte("admission.k8s.io/v1"), []byte("admission.k8s.io/v1beta1"), 1)
	if review := serve(t, newLimiter(1, time.Millisecond), bytes.NewReader(beta), -1); review.APIVersion != "admission.k8s.io/v1beta1" || review.Response.UID != "u-2" {
		t.Errorf("v1beta1 review answered as %s with uid %q", review.APIVersion, review.Response.UID)
	}
}

// TestReviewThrottled: with every slot taken for longer than the wait, a
// review is answered after the wait with 429 and its uid, without its body
// being decoded, and counted; the same with the byte budget taken.
func TestReviewThrottled(t *testing.T) {
	slots := newLimiter(1, 20*time.Millisecond)
	if !slots.acquire(t.Context()) {
		t.Fatal("the only slot is not free")
	}
	before := throttledCount(t)
	start := time.Now()
	review := serve(t, slots, bytes.NewReader(reviewBody(t, "u-429", `{"not":"decoded"`)), -1)
	wantRefusal(t, review, "u-429", http.StatusTooManyRequests, "too many concurrent admissions, retry")
	if took := time.Since(start); took > time.Second {
		t.Errorf("answered after %v, want after the wait (20ms)", took)
	}
	if got := throttledCount(t); got != before+1 {
		t.Errorf("machine_controller_webhook_admissions_throttled_total = %v, want %v", got, before+1)
	}
	slots.release()
	if review := serve(t, slots, bytes.NewReader(reviewBody(t, "u-2", "")), -1); !review.Response.Allowed {
		t.Errorf("after the slot was released: %+v, want allowed", review.Response.Result)
	}
	// With the bodies of other reviews filling the byte budget, a review
	// is turned away before its body is read.
	if !slots.bytes.TryAcquire(MaxBufferedBytes) {
		t.Fatal("the byte budget is not free")
	}
	body := reviewBody(t, "u-bytes", "")
	review = serve(t, slots, bytes.NewReader(body), int64(len(body)))
	wantRefusal(t, review, "u-bytes", http.StatusTooManyRequests, "too many concurrent admissions, retry")
	slots.bytes.Release(MaxBufferedBytes)
}

func throttledCount(t *testing.T) float64 {
	t.Helper()
	return counted(t, "machine_controller_webhook_admissions_throttled_total", "")
}

// TestReviewWithoutUID: a review without request.uid is refused, saying
// so, since no API server sends one.
func TestReviewWithoutUID(t *testing.T) {
	review := serve(t, newLimiter(1, time.Millisecond), bytes.NewReader(reviewBody(t, "", "")), -1)
	wantRefusal(t, review, "", http.StatusBadRequest, "the AdmissionReview has no request.uid")
	if !strings.Contains(review.Response.Result.Message, "so this answer has none") {
		t.Errorf("message %q does not say the answer has no uid", review.Response.Result.Message)
	}
}

// TestReviewTooDeep: a review nested deeper than the decoder takes is
// refused for it with its uid.
func TestReviewTooDeep(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 100000) + "1" + strings.Repeat("}", 100000)
	review := serve(t, newLimiter(1, time.Millisecond), bytes.NewReader(reviewBody(t, "u-deep", deep)), -1)
	wantRefusal(t, review, "u-deep", http.StatusBadRequest, "failed to decode the AdmissionReview")
	t.Log(review.Response.Result.Message)
}

// TestReviewTooLarge: a body over MaxReviewBytes is refused with its uid
// and the limit, whether it announces its length or not; one at the
// limit is read (and refused as cut short).
func TestReviewTooLarge(t *testing.T) {
	large := reviewBody(t, "u-large", `"`+strings.Repeat("x", MaxReviewBytes)+`"`)
	for _, length := range []int64{int64(len(large)), -1} {
		review := serve(t, newLimiter(1, time.Millisecond), bytes.NewReader(large), length)
		wantRefusal(t, review, "u-large", http.StatusRequestEntityTooLarge, "the AdmissionReview is larger than 4194304 bytes")
	}
	atLimit := reviewBody(t, "u-limit", `"`+strings.Repeat("x", MaxReviewBytes)+`"`)[:MaxReviewBytes]
	review := serve(t, newLimiter(1, time.Millisecond), bytes.NewReader(atLimit), -1)
	wantRefusal(t, review, "u-limit", http.StatusBadRequest, "failed to decode the AdmissionReview")
}

// TestScanUID: the uid is found wherever request has it, after values of
// any depth; nothing is found in what is no review.
func TestScanUID(t *testing.T) {
	for body, want := range map[string]string{
		`{"request":{"uid":"a"}}`: "a",
		`{"kind":"AdmissionReview","request":{"kind":{"x":[1,{"y":2}]},"uid":"b","object":{`: "b",
		`{"other":{"uid":"no"},"request":{"uid":"c"}}`:                                       "c",
		`{"request":{"uid":1}}`:      "",
		`[{"request":{"uid":"no"}}]`: "",
		`{"request":{"object":{}}}`:  "",
		`not json`:                   "",
	} {
		if got := scanUID(strings.NewReader(body)); string(got) != want {
			t.Errorf("scanUID(%s) = %q, want %q", body, got, want)
		}
	}
}
