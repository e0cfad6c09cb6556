package main

import (
	"strings"
	"testing"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/installer/storageclass"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// TestStorageClassWorkflow runs an infra admin's way of offering infra
// StorageClasses to tenant clusters through the command line: list, init
// (idempotent, all-or-nothing on typos), remove.
func TestStorageClassWorkflow(t *testing.T) {
	requireEnv(t)
	ctx := t.Context()
	for _, sc := range []*storagev1.StorageClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "sc-fast", Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}}, Provisioner: "example.com/ssd"},
		{ObjectMeta: metav1.ObjectMeta{Name: "sc-slow"}, Provisioner: "example.com/hdd"},
	} {
		if err := testClient.Create(ctx, sc); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = testClient.Delete(ctx, sc) })
	}
	kube := []string{"--kubeconfig", testEnv.KubeconfigPath}
	run := func(t *testing.T, args ...string) string {
		t.Helper()
		out, err := execute(t, append(append([]string{"storageclass"}, args...), kube...)...)
		if err != nil {
			t.Fatalf("storageclass %v: %v\n%s", args, err, out)
		}
		return out
	}
	annotation := func(t *testing.T, name string) (string, bool) {
		t.Helper()
		sc := &storagev1.StorageClass{}
		if err := testClient.Get(ctx, ctrlruntimeclient.ObjectKey{Name: name}, sc); err != nil {
			t.Fatal(err)
		}
		v, ok := sc.Annotations[storageclass.InitializeAnnotation]
		return v, ok
	}

	wantRow(t, run(t, "list"), "sc-fast", "example.com/ssd", "yes", "-")
	wantRow(t, run(t, "list"), "sc-slow", "example.com/hdd", "no", "-")
	if got := run(t, "init", "sc-fast"); got != "storageclass/sc-fast initialized for tenant clusters\n" {
		t.Errorf("init output = %q", got)
	}
	if v, _ := annotation(t, "sc-fast"); v != "true" {
		t.Errorf("annotation = %q, want \"true\"", v)
	}
	if got := run(t, "init", "sc-fast"); got != "storageclass/sc-fast unchanged\n" {
		t.Errorf("second init output = %q", got)
	}
	wantRow(t, run(t, "list"), "sc-fast", "example.com/ssd", "yes", "initialized")

	_, err := execute(t, append([]string{"storageclass", "init", "sc-slow", "sc-typo"}, kube...)...)
	if err == nil || !strings.Contains(err.Error(), `StorageClass "sc-typo" does not exist`) {
		t.Errorf("init with a typo: err = %v", err)
	}
	if _, ok := annotation(t, "sc-slow"); ok {
		t.Error("a failed init changed sc-slow")
	}

	if got := run(t, "remove", "sc-fast"); got != "storageclass/sc-fast no longer offered to tenant clusters\n" {
		t.Errorf("remove output = %q", got)
	}
	if _, ok := annotation(t, "sc-fast"); ok {
		t.Error("remove left the annotation")
	}
	if got := run(t, "remove", "sc-fast"); got != "storageclass/sc-fast unchanged\n" {
		t.Errorf("second remove output = %q", got)
	}
}

// wantRow checks the row of class name in a list table. Other tests share the
// API server, so the table may hold more classes and wider columns.
func wantRow(t *testing.T, table, name string, fields ...string) {
	t.Helper()
	for _, line := range strings.Split(table, "\n") {
		if got := strings.Fields(line); len(got) > 0 && got[0] == name {
			if strings.Join(got[1:], " ") != strings.Join(fields, " ") {
				t.Errorf("row of %s = %q, want %q", name, got[1:], fields)
			}
			return
		}
	}
	t.Errorf("no row for %s in:\n%s", name, table)
}

// TestStorageClassHelp: the help says what docs/infra-controller.md says:
// classes can be annotated and un-annotated at any time, tenant clusters
// that exist already follow.
func TestStorageClassHelp(t *testing.T) {
	out, err := execute(t, "storageclass", "--help")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "before creating tenant clusters") {
		t.Error("the help asks to annotate classes before creating tenant clusters; the infra-controller follows later changes")
	}
	checkGolden(t, "storageclass-help.golden", out)
}
