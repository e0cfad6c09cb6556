package envtest

import (
	"net/http"
	"testing"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		method, url string
		want        Request
	}{
		{"GET", "https://h/api", Request{Verb: "DISCOVERY"}},
		{"GET", "https://h/apis/kubevirt.io/v1", Request{Verb: "DISCOVERY"}},
		{"GET", "https://h/api/v1/namespaces/ns/secrets?limit=500", Request{Verb: "LIST", Resource: "v1/secrets"}},
		{"GET", "https://h/api/v1/namespaces/ns/secrets?watch=true", Request{Verb: "WATCH", Resource: "v1/secrets"}},
		{"GET", "https://h/api/v1/namespaces/ns/secrets/s", Request{Verb: "GET", Resource: "v1/secrets"}},
		{"GET", "https://h/api/v1/namespaces/ns", Request{Verb: "GET", Resource: "v1/namespaces"}},
		{"PATCH", "https://h/apis/kubevirt.io/v1/namespaces/ns/virtualmachines/vm/status", Request{Verb: "PATCH", Resource: "kubevirt.io/v1/virtualmachines/status"}},
		{"POST", "https://h/apis/kubevirt.io/v1/namespaces/ns/virtualmachines", Request{Verb: "POST", Resource: "kubevirt.io/v1/virtualmachines"}},
		{"GET", "https://h/apis/storage.k8s.io/v1/storageclasses/sc", Request{Verb: "GET", Resource: "storage.k8s.io/v1/storageclasses"}},
		{"GET", "https://h/apis/storage.k8s.io/v1/storageclasses?watch=1", Request{Verb: "WATCH", Resource: "storage.k8s.io/v1/storageclasses"}},
		{"GET", "https://h/version", Request{Verb: "GET", Resource: "/version"}},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.url, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), tt.method, tt.url, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := Classify(req); got != tt.want {
				t.Errorf("Classify() = %+v, want %+v", got, tt.want)
			}
		})
	}
}
