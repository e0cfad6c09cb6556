package envtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	cdicorev1beta1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

// cdiAdmissionTimeout bounds the start of CDI's admission.
const cdiAdmissionTimeout = 2 * time.Minute

// cdiAPIServerIdentity is cdi-apiserver's ServiceAccount with the RBAC CDI
// generates for it.
var cdiAPIServerIdentity = identity{
	tool: CDITool, rbacArgs: []string{"apiserver-rbac", "-namespace", CDINamespace},
	namespace: CDINamespace, name: "cdi-apiserver",
}

// cdiValidatingWebhook is the name CDI gives its DataVolume validation; an
// API server's refusal names it.
const cdiValidatingWebhook = "datavolume-validate.cdi.kubevirt.io"

// startCDIAdmission serves cdi-apiserver's admission webhooks (DataVolume
// defaulting and validation, DataImportCron, CDI CR, populator and
// ObjectTransfer validation) with CDI's own handlers under cdi-apiserver's
// RBAC, registers the webhook configurations cdi-operator writes, and
// waits until the API server calls them.
func (e *Env) startCDIAdmission(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, cdiAdmissionTimeout)
	defer cancel()
	if err := e.ensureNamespace(ctx, CDINamespace); err != nil {
		return err
	}
	_, _, err := e.serveUpstreamWebhooks(ctx, upstreamWebhooks{
		name: "cdi-api-webhooks", tool: CDITool, namespace: CDINamespace, identity: cdiAPIServerIdentity,
	})
	if err != nil {
		return err
	}
	return e.waitCDIAdmission(ctx)
}

// waitCDIAdmission waits until the API server calls CDI's webhooks: a
// dry-run DataVolume with a blank source is admitted (after CDI's
// defaulting webhook, whose failure policy is Fail) and one without a
// storage request is refused by CDI's validation.
func (e *Env) waitCDIAdmission(ctx context.Context) error {
	err := poll.Wait(ctx, cdiAdmissionTimeout, func() error {
		valid := admissionProbeDataVolume()
		valid.Spec.Source = &cdicorev1beta1.DataVolumeSource{Blank: &cdicorev1beta1.DataVolumeBlankImage{}}
		valid.Spec.Storage = &cdicorev1beta1.StorageSpec{Resources: corev1.VolumeResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
		}}
		if err := e.Client.Create(ctx, valid, ctrlruntimeclient.DryRunAll); err != nil {
			return fmt.Errorf("a valid DataVolume was refused: %w", err)
		}
		err := e.Client.Create(ctx, admissionProbeDataVolume(), ctrlruntimeclient.DryRunAll)
		if err == nil {
			return errors.New("CDI's validating webhook has not run (a DataVolume without storage was admitted)")
		}
		if !strings.Contains(err.Error(), cdiValidatingWebhook) {
			return fmt.Errorf("CDI's validating webhook has not run: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("CDI's admission did not take effect: %w", errors.Join(err, e.ComponentErrors()))
	}
	return nil
}

func admissionProbeDataVolume() *cdicorev1beta1.DataVolume {
	return &cdicorev1beta1.DataVolume{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: "admission-probe"}}
}
