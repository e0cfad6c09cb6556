package controller

import (
	"net/http/httptest"
	"testing"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
)

func TestCachesSynced(t *testing.T) {
	for _, tc := range []struct {
		name    string
		synced  bool
		wantErr bool
	}{
		{name: "synced", synced: true},
		{name: "not synced", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			check := cachesSynced(&informertest.FakeInformers{Synced: ptr.To(tc.synced)})
			req := httptest.NewRequestWithContext(t.Context(), "GET", "/readyz", nil)
			if err := check(req); (err != nil) != tc.wantErr {
				t.Errorf("err = %v, want an error: %v", err, tc.wantErr)
			}
		})
	}
}
