package infracontroller_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	infrav1alpha1 "github.com/kubevirt-kkp/kkp-kubevirt/pkg/apis/infra/v1alpha1"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/networks"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

const (
	bridgeConfig = `{"cniVersion": "0.3.1", "type": "bridge", "bridge": "br100"}`
	vlanConfig   = `{"cniVersion": "0.3.1", "type": "macvlan", "master": "eth1.200"}`
)

func TestTenantNetworks(t *testing.T) {
	env := gcPlane.Env(t)
	ctx, c := t.Context(), env.Client
	s := newSpace(t, env)
	nsNets := s.tenant("nets")
	o := s.options(infracontroller.DefaultOptions())
	o.Flavors, o.EnableStorageClasses, o.EnableCSIAccess, o.EnableNetworkPolicies = flavorsOff(), false, false, false
	o.EnableNetworks = true
	ns, other := nsNets, s.other("shared")
	createTenant(t, c, ns, nil)
	createTenant(t, c, other, nil)
	// A shared network in another namespace and a foreign one in the
	// tenant namespace with a name the list uses.
	shared := nad(other, "vlan-shared", nil, vlanConfig)
	foreign := nad(ns, "storage", nil, vlanConfig)
	for _, obj := range []*unstructured.Unstructured{shared, foreign} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	startController(t, env.Config, o, nil, -1)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: networks.ConfigMapName},
		Data: map[string]string{
			"tenant-a": bridgeConfig, "storage": bridgeConfig,
			// Refused: Multus could not use them.
			"broken": "{not json", "type-number": `{"type": 5}`, "plugins-string": `{"plugins": "notalist"}`,
		},
	}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}

	t.Run("a listed network becomes a NetworkAttachmentDefinition", func(t *testing.T) {
		poll.Until(t, wait, func() error { return checkNAD(ctx, c, ns, "tenant-a", bridgeConfig) })
	})
	t.Run("invalid entries are skipped", func(t *testing.T) {
		poll.Holds(t, time.Second, func() error {
			for _, name := range []string{"broken", "type-number", "plugins-string"} {
				if err := absentNAD(ctx, c, ns, name); err != nil {
					return err
				}
			}
			return nil
		})
		poll.Until(t, wait, func() error {
			return checkWarning(ctx, c, cm, infrav1alpha1.ReasonInvalidConfig, []string{"broken", "type-number", "plugins-string"})
		})
	})
	t.Run("a hand-edited network is restored", func(t *testing.T) {
		have, err := get(ctx, c, networks.NetworkAttachmentDefinitionGVK, ns, "tenant-a")
		if err != nil {
			t.Fatal(err)
		}
		if err := unstructured.SetNestedField(have.Object, vlanConfig, "spec", "config"); err != nil {
			t.Fatal(err)
		}
		if err := c.Update(ctx, have); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, wait, func() error { return checkNAD(ctx, c, ns, "tenant-a", bridgeConfig) })
	})
	t.Run("a changed configuration is applied", func(t *testing.T) {
		cm.Data["tenant-a"] = vlanConfig
		if err := c.Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, wait, func() error { return checkNAD(ctx, c, ns, "tenant-a", vlanConfig) })
	})
	t.Run("a network removed from the list is deleted", func(t *testing.T) {
		delete(cm.Data, "tenant-a")
		if err := c.Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, wait, func() error { return absentNAD(ctx, c, ns, "tenant-a") })
	})
	t.Run("shared and foreign networks are never modified", func(t *testing.T) {
		for _, obj := range []*unstructured.Unstructured{shared, foreign} {
			if err := unchanged(ctx, c, obj); err != nil {
				t.Error(err)
			}
		}
	})
	t.Run("networks are deleted with the tenant namespace", func(t *testing.T) {
		cm.Data["tenant-b"] = bridgeConfig
		if err := c.Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, wait, func() error { return checkNAD(ctx, c, ns, "tenant-b", bridgeConfig) })
		if err := c.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, time.Minute, func() error {
			err := c.Get(ctx, ctrlruntimeclient.ObjectKey{Name: ns}, &corev1.Namespace{})
			switch {
			case apierrors.IsNotFound(err):
				return nil
			case err != nil:
				return err
			}
			return fmt.Errorf("namespace %s still exists", ns)
		})
		if err := absentNAD(ctx, c, ns, "tenant-b"); err != nil {
			t.Error(err)
		}
		if err := unchanged(ctx, c, shared); err != nil {
			t.Error(err)
		}
	})
}

func nad(namespace, name string, labels map[string]string, config string) *unstructured.Unstructured {
	return object(networks.NetworkAttachmentDefinitionGVK, namespace, name, labels, map[string]any{"config": config})
}

func checkNAD(ctx context.Context, c ctrlruntimeclient.Client, namespace, name, config string) error {
	have, err := get(ctx, c, networks.NetworkAttachmentDefinitionGVK, namespace, name)
	if err != nil {
		return err
	}
	if diff := cmp.Diff(map[string]any{"config": config}, have.Object["spec"]); diff != "" {
		return fmt.Errorf("spec of %s (-want +got):\n%s", name, diff)
	}
	if diff := cmp.Diff(withManaged(map[string]string{networks.Label: "true"}), have.GetLabels()); diff != "" {
		return fmt.Errorf("labels of %s (-want +got):\n%s", name, diff)
	}
	return nil
}

func absentNAD(ctx context.Context, c ctrlruntimeclient.Client, namespace, name string) error {
	_, err := get(ctx, c, networks.NetworkAttachmentDefinitionGVK, namespace, name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("NetworkAttachmentDefinition %s exists", name)
}
