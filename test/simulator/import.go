package simulator

import (
	"context"
	"fmt"
	"sync"

	cdicorev1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/importer"

	"k8s.io/apimachinery/pkg/types"
)

// httpImports remembers which DataVolumes have had their HTTP source
// downloaded, so a failed status update does not download an image twice.
type httpImports struct {
	mu   sync.Mutex
	done map[types.UID]bool
}

// importHTTP downloads the HTTP source of dv once when Options.ImportHTTP is
// set. It does nothing for other sources or when the switch is off.
func (r *reconciler) importHTTP(ctx context.Context, dv *cdicorev1beta1.DataVolume) error {
	if !r.opts.ImportHTTP || dv.Spec.Source == nil || dv.Spec.Source.HTTP == nil {
		return nil
	}
	r.imports.mu.Lock()
	done := r.imports.done[dv.UID]
	r.imports.mu.Unlock()
	if done {
		return nil
	}
	if _, err := importer.Download(ctx, r.opts.HTTPClient, dv.Spec.Source.HTTP.URL); err != nil {
		return fmt.Errorf("failed to import DataVolume %s from %s: %w", dv.Name, dv.Spec.Source.HTTP.URL, err)
	}
	r.imports.mu.Lock()
	defer r.imports.mu.Unlock()
	if r.imports.done == nil {
		r.imports.done = map[types.UID]bool{}
	}
	r.imports.done[dv.UID] = true
	return nil
}
