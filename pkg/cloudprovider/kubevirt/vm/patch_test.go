package vm

import (
	"fmt"
	"strings"
	"testing"
)

func TestVMPatch(t *testing.T) {
	plain, err := Build(testInput())
	if err != nil {
		t.Fatal(err)
	}
	cloudInit := -1
	for i, v := range plain.VirtualMachine.Spec.Template.Spec.Volumes {
		if v.Name == CloudInitDiskName {
			cloudInit = i
		}
	}
	var ourLabel string
	for k := range plain.VirtualMachine.Labels {
		ourLabel = strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
		break
	}
	for _, tc := range []struct {
		name    string
		patch   string
		wantErr string
		check   func(t *testing.T, objs *Objects)
	}{
		{
			name:  "adds a field no option covers",
			patch: `[{"op":"add","path":"/spec/template/spec/domain/clock","value":{"timezone":"Europe/Berlin"}}]`,
			check: func(t *testing.T, objs *Objects) {
				t.Helper()
				c := objs.VirtualMachine.Spec.Template.Spec.Domain.Clock
				if c == nil || c.Timezone == nil || string(*c.Timezone) != "Europe/Berlin" {
					t.Errorf("clock = %+v, want timezone Europe/Berlin", c)
				}
				if _, ok := objs.VirtualMachine.Spec.Template.ObjectMeta.Annotations[AnnotationVMPatch]; ok {
					t.Error("the patch annotation was copied onto the VM template")
				}
			},
		},
		{
			name:  "a label of its own is fine",
			patch: `[{"op":"add","path":"/metadata/labels/team","value":"storage"}]`,
			check: func(t *testing.T, objs *Objects) {
				t.Helper()
				if objs.VirtualMachine.Labels["team"] != "storage" {
					t.Errorf("labels = %v", objs.VirtualMachine.Labels)
				}
			},
		},
		{name: "not JSON", patch: `{nope`, wantErr: "not an RFC 6902 JSON patch"},
		{name: "not a list", patch: `{"op":"add"}`, wantErr: "not an RFC 6902 JSON patch"},
		{name: "unknown op", patch: `[{"op":"merge","path":"/spec"}]`, wantErr: "unsupported operation"},
		{name: "no path", patch: `[{"op":"remove"}]`, wantErr: "missing path"},
		{name: "renames the VM", patch: `[{"op":"replace","path":"/metadata/name","value":"x"}]`, wantErr: "metadata.name"},
		{name: "moves it", patch: `[{"op":"replace","path":"/metadata/namespace","value":"x"}]`, wantErr: "metadata.namespace"},
		{name: "changes the kind", patch: `[{"op":"replace","path":"/kind","value":"VirtualMachineInstance"}]`, wantErr: "kind"},
		{name: "owns it", patch: `[{"op":"add","path":"/metadata/ownerReferences","value":[{"apiVersion":"v1","kind":"Pod","name":"p","uid":"u"}]}]`, wantErr: "ownerReferences"},
		{name: "drops a label we rely on", patch: `[{"op":"remove","path":"/metadata/labels/` + ourLabel + `"}]`, wantErr: "must not change label"},
		{name: "drops the cloud-init volume", patch: fmt.Sprintf(`[{"op":"remove","path":"/spec/template/spec/volumes/%d"}]`, cloudInit), wantErr: "volume cloudinitdisk"},
		{name: "drops the template", patch: `[{"op":"remove","path":"/spec/template"}]`, wantErr: "spec.template"},
		{name: "a field KubeVirt does not have", patch: `[{"op":"add","path":"/spec/template/spec/domain/notAField","value":1}]`, wantErr: "field .spec.template.spec.domain.notAField is not a field"},
		{name: "a path that is not there", patch: `[{"op":"remove","path":"/spec/nothing"}]`, wantErr: "failed to apply"},
		{name: "a test that fails", patch: `[{"op":"test","path":"/metadata/name","value":"other"}]`, wantErr: "failed to apply"},
		{name: "too many operations", patch: "[" + strings.Repeat(`{"op":"add","path":"/metadata/labels/a","value":"b"},`, 100) +
			`{"op":"add","path":"/metadata/labels/a","value":"b"}]`, wantErr: "101 operations, at most 100 allowed"},
		// Not even JSON: the size is refused before the patch is decoded.
		{name: "too long", patch: strings.Repeat("[", MaxPatchBytes+1), wantErr: "65537 bytes, at most 65536 allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := testInput()
			in.Machine.Annotations = map[string]string{AnnotationVMPatch: tc.patch}
			objs, err := Build(in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), AnnotationVMPatch) {
					t.Fatalf("Build error = %v, want one naming %s and containing %q", err, AnnotationVMPatch, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, objs)
		})
	}
}

func FuzzParsePatch(f *testing.F) {
	f.Add(`[{"op":"add","path":"/spec/template/spec/domain/clock","value":{"utc":{}}}]`)
	f.Add(`[{"op":"move","from":"/a","path":"/b"}]`)
	f.Add(`{`)
	f.Fuzz(func(t *testing.T, value string) {
		in := testInput()
		in.Machine.Annotations = map[string]string{AnnotationVMPatch: value}
		_, _ = Build(in)
	})
}
