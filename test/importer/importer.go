package importer

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"

	kubevirtcorev1 "kubevirt.io/api/core/v1"
	cdicorev1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// Importer downloads each HTTP DataVolume of a namespace once.
type Importer struct {
	// Reader lists DataVolumes and VirtualMachines.
	Reader ctrlruntimeclient.Reader
	// Namespace is the infra namespace watched.
	Namespace string
	// HTTP fetches the images; http.DefaultClient when nil.
	HTTP *http.Client

	mu       sync.Mutex
	imported map[string]bool
	bytes    int64
	imports  int
}

// Stats are the imports done so far.
type Stats struct {
	// Imports is the number of DataVolumes whose image was downloaded.
	Imports int
	// Bytes is the number of bytes downloaded.
	Bytes int64
}

// Stats returns the imports done so far.
func (im *Importer) Stats() Stats {
	im.mu.Lock()
	defer im.mu.Unlock()
	return Stats{Imports: im.imports, Bytes: im.bytes}
}

// Sync downloads the image of every HTTP DataVolume not imported yet.
func (im *Importer) Sync(ctx context.Context) error {
	pending, err := im.pending(ctx)
	if err != nil {
		return err
	}
	for name, url := range pending {
		n, err := im.download(ctx, url)
		if err != nil {
			return fmt.Errorf("failed to import DataVolume %s from %s: %w", name, url, err)
		}
		im.mu.Lock()
		im.imported[name] = true
		im.imports++
		im.bytes += n
		im.mu.Unlock()
	}
	return nil
}

// pending returns the URL of every HTTP DataVolume not imported yet, keyed
// by DataVolume name.
func (im *Importer) pending(ctx context.Context) (map[string]string, error) {
	var dvs cdicorev1beta1.DataVolumeList
	if err := im.Reader.List(ctx, &dvs, ctrlruntimeclient.InNamespace(im.Namespace)); err != nil {
		return nil, fmt.Errorf("failed to list DataVolumes: %w", err)
	}
	var vms kubevirtcorev1.VirtualMachineList
	if err := im.Reader.List(ctx, &vms, ctrlruntimeclient.InNamespace(im.Namespace)); err != nil {
		return nil, fmt.Errorf("failed to list VirtualMachines: %w", err)
	}
	sources := map[string]*cdicorev1beta1.DataVolumeSource{}
	for i := range dvs.Items {
		sources[dvs.Items[i].Name] = dvs.Items[i].Spec.Source
	}
	for i := range vms.Items {
		for _, t := range vms.Items[i].Spec.DataVolumeTemplates {
			sources[t.Name] = t.Spec.Source
		}
	}
	im.mu.Lock()
	defer im.mu.Unlock()
	if im.imported == nil {
		im.imported = map[string]bool{}
	}
	out := map[string]string{}
	for name, src := range sources {
		if src != nil && src.HTTP != nil && !im.imported[name] {
			out[name] = src.HTTP.URL
		}
	}
	return out, nil
}

func (im *Importer) download(ctx context.Context, url string) (int64, error) {
	return Download(ctx, im.HTTP, url)
}

// Download reads the image at url to its end, as CDI's importer would, and
// returns the number of bytes read. A nil client means http.DefaultClient.
func Download(ctx context.Context, client *http.Client, url string) (int64, error) {
	if client == nil {
		client = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("unexpected status %s", resp.Status)
	}
	return io.Copy(io.Discard, resp.Body)
}
