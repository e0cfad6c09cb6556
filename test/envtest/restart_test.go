package envtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

func TestRestartAPIServer(t *testing.T) {
	env := Start(t)
	ctx := t.Context()
	ns := env.CreateNamespace(t, "restart")
	before := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before", Namespace: ns}}
	if err := env.Client.Create(ctx, before); err != nil {
		t.Fatal(err)
	}
	informers, err := cache.New(env.Config, cache.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	cacheCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = informers.Start(cacheCtx) }()
	if !informers.WaitForCacheSync(cacheCtx) || informers.List(ctx, &corev1.ConfigMapList{}) != nil {
		t.Fatal("cache did not start")
	}
	host := env.Config.Host

	// While the API server is down, requests fail.
	downErr := make(chan error, 1)
	go func() {
		time.Sleep(500 * time.Millisecond)
		short, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		downErr <- env.Client.Get(short, ctrlruntimeclient.ObjectKeyFromObject(before), &corev1.ConfigMap{})
	}()
	if err := env.RestartAPIServer(ctx, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := <-downErr; err == nil {
		t.Error("a request succeeded while the API server was down")
	}

	if env.Config.Host != host {
		t.Errorf("Config.Host = %s after the restart, want %s", env.Config.Host, host)
	}
	// Objects stored before the restart are still there, read with the old
	// credentials, and the informers' watches resume.
	if err := env.Client.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(before), &corev1.ConfigMap{}); err != nil {
		t.Fatalf("failed to read an object stored before the restart: %v", err)
	}
	after := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after", Namespace: ns}}
	if err := env.Client.Create(ctx, after); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 30*time.Second, func() error {
		if err := informers.Get(ctx, ctrlruntimeclient.ObjectKeyFromObject(after), &corev1.ConfigMap{}); err != nil {
			return fmt.Errorf("the cache did not see an object created after the restart: %w", err)
		}
		return nil
	})
}
