package envtest

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	kubevirtcorev1 "kubevirt.io/api/core/v1"
	cdicorev1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
)

// toolClientTimeout bounds one call to an upstream tool's server.
const toolClientTimeout = 30 * time.Second

// toolClient calls what an upstream tool's webhook server answers beyond
// admission.
type toolClient struct {
	base   string
	client *http.Client
}

func newToolClient(base string, caBundle []byte) (*toolClient, error) {
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caBundle) {
		return nil, errors.New("the tool server's CA bundle holds no certificate")
	}
	return &toolClient{base: base, client: &http.Client{
		Timeout:   toolClientTimeout,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}},
	}}, nil
}

// dataVolumes returns the DataVolumes virt-controller creates for vm, made
// by virt-controller's own code in KubeVirtTool's server.
func (c *toolClient) dataVolumes(ctx context.Context, vm *kubevirtcorev1.VirtualMachine) ([]*cdicorev1beta1.DataVolume, error) {
	body, err := json.Marshal(vm)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/datavolumes", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("failed to ask KubeVirt for the DataVolumes of VM %s: %w", vm.Name, err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("failed to read KubeVirt's DataVolumes of VM %s: %w", vm.Name, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("KubeVirt makes no DataVolumes of VM %s: %s: %s", vm.Name, resp.Status, bytes.TrimSpace(data))
	}
	var dvs []*cdicorev1beta1.DataVolume
	if err := json.Unmarshal(data, &dvs); err != nil {
		return nil, fmt.Errorf("failed to decode KubeVirt's DataVolumes of VM %s: %w", vm.Name, err)
	}
	return dvs, nil
}
