package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/flavors"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func TestRun(t *testing.T) {
	env := envtest.Start(t)
	probe, metrics := freeAddr(t), freeAddr(t)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--kubeconfig", env.KubeconfigPath, "--health-probe-bind-address", probe, "--metrics-bind-address", metrics}, io.Discard)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}()
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cluster-run"}}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		t.Run(path+" answers 200", func(t *testing.T) {
			poll.Until(t, 30*time.Second, func() error {
				resp, err := http.Get("http://" + probe + path)
				if err != nil {
					return err
				}
				defer resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					return fmt.Errorf("%s: %s", path, resp.Status)
				}
				return nil
			})
		})
	}
	t.Run("infra_controller_build_info is served", func(t *testing.T) {
		resp, err := http.Get("http://" + metrics + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(body), `infra_controller_build_info{commit="`) {
			t.Errorf("/metrics lacks infra_controller_build_info:\n%.2000s", body)
		}
	})
	t.Run("the controllers run", func(t *testing.T) {
		poll.Until(t, 30*time.Second, func() error {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(flavors.PresetGVK)
			return env.Client.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: "cluster-run", Name: flavors.StandardPresetName}, u)
		})
	})
}
