package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/config"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/vm"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// fakeProvider answers after delay with err; AddDefaults sets a label.
// calls, when set, counts the calls of both methods.
type fakeProvider struct {
	delay time.Duration
	err   error
	calls *atomic.Int32
}

func (f fakeProvider) wait(ctx context.Context) error {
	if f.calls != nil {
		f.calls.Add(1)
	}
	select {
	case <-time.After(f.delay):
		return f.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f fakeProvider) AddDefaults(ctx context.Context, _ *zap.SugaredLogger, spec clusterv1alpha1.MachineSpec) (clusterv1alpha1.MachineSpec, error) {
	if err := f.wait(ctx); err != nil {
		return spec, err
	}
	out := *spec.DeepCopy()
	out.Labels = map[string]string{"defaulted": "true"}
	return out, nil
}

func (f fakeProvider) Validate(ctx context.Context, _ *zap.SugaredLogger, _ clusterv1alpha1.MachineSpec) error {
	return f.wait(ctx)
}

const validSpec = `{"cloudProvider":"kubevirt","cloudProviderSpec":{"clusterName":"c","virtualMachine":{"template":{"cpus":"1","memory":"2Gi",` +
	`"primaryDisk":{"osImage":"http://h/i.img","size":"10Gi","storageClassName":"standard"}}}},"operatingSystem":"ubuntu","operatingSystemSpec":{}}`

// legacySpec is the flat format of KKP <= 2.20, converted with a warning.
const legacySpec = `{"cloudProvider":"kubevirt","cloudProviderSpec":{"clusterName":"c","cpus":"1","memory":"2Gi","sourceURL":"http://h/i.img",` +
	`"pvcSize":"10Gi","storageClassName":"standard","kubeconfig":"` + testKubeconfig + `"},"operatingSystem":"ubuntu","operatingSystemSpec":{}}`

// testKubeconfig is a base64 kubeconfig of a server nobody asks (the fake
// provider answers).
const testKubeconfig = "YXBpVmVyc2lvbjogdjEKa2luZDogQ29uZmlnCmNsdXN0ZXJzOiBbe25hbWU6IGMsIGNsdXN0ZXI6IHtzZXJ2ZXI6ICJodHRwczovLzEyNy4wLjAuMTo2NDQzIn19XQpjb250ZXh0czogW3tuYW1lOiBjLCBjb250ZXh0OiB7Y2x1c3RlcjogYywgdXNlcjogdX19XQpjdXJyZW50LWNvbnRleHQ6IGMKdXNlcnM6IFt7bmFtZTogdSwgdXNlcjoge3Rva2VuOiB0fX1dCg=="

// specWithDisks is validSpec with n secondary disks.
func specWithDisks(n int) string {
	disks := strings.TrimSuffix(strings.Repeat(`{"size":"1Gi","storageClassName":"standard"},`, n), ",")
	return strings.Replace(validSpec, `"primaryDisk":`, `"secondaryDisks":[`+disks+`],"primaryDisk":`, 1)
}

func deployment(spec string, edit func(*clusterv1alpha1.MachineDeployment)) *clusterv1alpha1.MachineDeployment {
	labels := map[string]string{"pool": "a"}
	md := &clusterv1alpha1.MachineDeployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "cluster.k8s.io/v1alpha1", Kind: "MachineDeployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "md"},
		Spec: clusterv1alpha1.MachineDeploymentSpec{
			Selector: metav1.LabelSelector{MatchLabels: labels},
			Template: clusterv1alpha1.MachineTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: clusterv1alpha1.MachineSpec{
				ProviderSpec: clusterv1alpha1.ProviderSpec{Value: &runtime.RawExtension{Raw: []byte(spec)}},
				Versions:     clusterv1alpha1.MachineVersionInfo{Kubelet: "v1.33.4"},
			}},
		},
	}
	if spec == "" {
		md.Spec.Template.Spec.ProviderSpec.Value = nil
	}
	if edit != nil {
		edit(md)
	}
	return md
}

func request(t *testing.T, op admissionv1.Operation, obj, old runtime.Object) admission.Request {
	t.Helper()
	raw := func(o runtime.Object) runtime.RawExtension {
		if o == nil {
			return runtime.RawExtension{}
		}
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		return runtime.RawExtension{Raw: b}
	}
	kind := obj.GetObjectKind().GroupVersionKind()
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID: "uid", Kind: metav1.GroupVersionKind{Group: kind.Group, Version: kind.Version, Kind: kind.Kind},
		Name: "md", Namespace: "kube-system", Operation: op, Object: raw(obj), OldObject: raw(old),
	}}
}

func handlers(t testing.TB, p Provider) (*Mutator, *Validator) {
	t.Helper()
	m, v, err := NewHandlers(HandlerOptions{Provider: p, InfraBudget: 200 * time.Millisecond, Getenv: func(key string) string {
		if key == envKubeconfig {
			return testKubeconfig
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	return m, v
}

// TestValidate: the verdicts and warnings of the validating webhook.
func TestValidate(t *testing.T) {
	terminal := cloudprovider.NewInvalidConfiguration("spec.providerSpec.value.cloudProviderSpec.virtualMachine.template.primaryDisk.storageClassName: StorageClass \"standard\" not found")
	for _, tc := range []struct {
		name         string
		provider     fakeProvider
		md           *clusterv1alpha1.MachineDeployment
		old          *clusterv1alpha1.MachineDeployment
		wantRefusal  string
		wantWarnings []string
		// wantUnchecked is the reason counted for unchecked infra facts.
		wantUnchecked string
	}{
		{name: "valid", md: deployment(validSpec, nil)},
		{name: "legacy spec converted", md: deployment(legacySpec, nil), wantWarnings: []string{"flat format of KKP <= 2.20"}},
		{name: "infra fact missing", provider: fakeProvider{err: terminal}, md: deployment(validSpec, nil),
			wantRefusal: "spec.template.spec.providerSpec.value.cloudProviderSpec.virtualMachine.template.primaryDisk.storageClassName: StorageClass"},
		{name: "infra silent", provider: fakeProvider{delay: time.Hour}, md: deployment(validSpec, nil), wantWarnings: []string{"infra cluster not checked"},
			wantUnchecked: "timeout"},
		{name: "infra error", provider: fakeProvider{err: context.Canceled}, md: deployment(validSpec, nil), wantWarnings: []string{"infra cluster not checked"},
			wantUnchecked: "error"},
		{name: "no providerSpec", md: deployment("", nil), wantRefusal: "spec.template.spec.providerSpec.value: Required value"},
		{name: "negative replicas", md: deployment(validSpec, func(md *clusterv1alpha1.MachineDeployment) { md.Spec.Replicas = ptr.To[int32](-1) }),
			wantRefusal: "spec.replicas: Invalid value: -1"},
		{name: "negative surge", md: deployment(validSpec, func(md *clusterv1alpha1.MachineDeployment) {
			md.Spec.Strategy = &clusterv1alpha1.MachineDeploymentStrategy{RollingUpdate: &clusterv1alpha1.MachineRollingUpdateDeployment{MaxSurge: ptr.To(intstr.FromInt32(-1))}}
		}), wantRefusal: "spec.strategy.rollingUpdate.maxSurge: Invalid value: -1"},
		{name: "unchanged spec of an invalid object", md: deployment(validSpec, func(md *clusterv1alpha1.MachineDeployment) {
			md.Spec.Template.Spec.Versions.Kubelet = ""
			md.Annotations = map[string]string{"a": "b"}
		}), old: deployment(validSpec, func(md *clusterv1alpha1.MachineDeployment) { md.Spec.Template.Spec.Versions.Kubelet = "" })},
		{name: "too many secondary disks", md: deployment(specWithDisks(1000), nil),
			wantRefusal: "spec.template.spec.providerSpec.value.cloudProviderSpec.virtualMachine.template.secondaryDisks: Too many: 1000: must have at most 64 items"},
		// The red team's 10,000 disks are refused for their size, undecoded.
		{name: "red team's disks", md: deployment(specWithDisks(10000), nil),
			wantRefusal: "spec.template.spec.providerSpec.value: Too long: may not be more than 262144 bytes (it has 450284)"},
		{name: "providerSpec too long", md: deployment(`{"x":"`+strings.Repeat("x", config.MaxValueBytes)+`"}`, nil),
			wantRefusal: "spec.template.spec.providerSpec.value: Too long: may not be more than 262144 bytes"},
		{name: "VM patch too long", md: deployment(validSpec, func(md *clusterv1alpha1.MachineDeployment) {
			md.Spec.Template.Annotations = map[string]string{vm.AnnotationVMPatch: strings.Repeat("[", vm.MaxPatchBytes+1)}
		}), wantRefusal: "spec.template.metadata.annotations[kkp-kubevirt.io/vm-patch]: Too long: may not be more than 65536 bytes"},
		{name: "other controller", md: deployment("{}", func(md *clusterv1alpha1.MachineDeployment) {
			md.Labels = map[string]string{"machine.k8s.io/controller": "other"}
		})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, v := handlers(t, tc.provider)
			unchecked := uncheckedCount(t, tc.wantUnchecked)
			op := admissionv1.Create
			var old runtime.Object
			if tc.old != nil {
				op, old = admissionv1.Update, tc.old
			}
			resp := v.Handle(t.Context(), request(t, op, tc.md, old))
			switch {
			case tc.wantRefusal == "" && !resp.Allowed:
				t.Fatalf("refused: %v", resp.Result)
			case tc.wantRefusal != "" && (resp.Allowed || !strings.Contains(resp.Result.Message, tc.wantRefusal)):
				t.Fatalf("response %+v, want a refusal containing %q", resp.Result, tc.wantRefusal)
			}
			if len(resp.Warnings) != len(tc.wantWarnings) {
				t.Fatalf("warnings %q, want %q", resp.Warnings, tc.wantWarnings)
			}
			if tc.wantUnchecked != "" && uncheckedCount(t, tc.wantUnchecked) != unchecked+1 {
				t.Errorf("machine_controller_webhook_infra_unchecked_total{reason=%q} not counted", tc.wantUnchecked)
			}
			for i, w := range tc.wantWarnings {
				if !strings.Contains(resp.Warnings[i], w) {
					t.Errorf("warning %q, want it to contain %q", resp.Warnings[i], w)
				}
			}
		})
	}
}

// uncheckedCount reads machine_controller_webhook_infra_unchecked_total
// of a reason as a scrape would.
func uncheckedCount(t *testing.T, reason string) float64 {
	t.Helper()
	return counted(t, "machine_controller_webhook_infra_unchecked_total", reason)
}

// counted reads the counter name of the webhook's metrics as a scrape
// would, the one with label value label ("" for a counter without labels).
func counted(t *testing.T, name, label string) float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	if err := registerMetrics(reg); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, family := range families {
		if family.GetName() != name {
			continue
		}
		for _, m := range family.GetMetric() {
			if labels := m.GetLabel(); (label == "" && len(labels) == 0) || (len(labels) == 1 && labels[0].GetValue() == label) {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// TestMutateOwnerDefaultsOnlyChangedTemplates: an owner's template gets
// defaults on create and when its spec changes, never on an update that
// leaves it alone (its template hash, hence its Machines, stay).
func TestMutateOwnerDefaultsOnlyChangedTemplates(t *testing.T) {
	m, _ := handlers(t, fakeProvider{})
	old := deployment(validSpec, nil)
	for _, tc := range []struct {
		name      string
		op        admissionv1.Operation
		md        *clusterv1alpha1.MachineDeployment
		old       runtime.Object
		wantPatch bool
	}{
		{name: "create", op: admissionv1.Create, md: deployment(validSpec, nil), wantPatch: true},
		{name: "annotation only", op: admissionv1.Update, old: old,
			md: deployment(validSpec, func(md *clusterv1alpha1.MachineDeployment) { md.Annotations = map[string]string{"a": "b"} })},
		{name: "kubelet changed", op: admissionv1.Update, old: old, wantPatch: true,
			md: deployment(validSpec, func(md *clusterv1alpha1.MachineDeployment) { md.Spec.Template.Spec.Versions.Kubelet = "1.34.0" })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := m.Handle(t.Context(), request(t, tc.op, tc.md, tc.old))
			if !resp.Allowed {
				t.Fatalf("refused: %v", resp.Result)
			}
			if got := len(resp.Patches) > 0; got != tc.wantPatch {
				t.Errorf("patches %v, want patched %v", resp.Patches, tc.wantPatch)
			}
		})
	}
}

// TestUnchangedSpecsSkipTheProvider: an update that leaves the spec alone
// (the controllers' finalizers, annotations) is admitted by both webhooks
// without asking the provider and without a patch; a Machine's bypass
// annotation is removed by a patch of that one annotation; the defaults
// of a create are patched below the template's spec only.
func TestUnchangedSpecsSkipTheProvider(t *testing.T) {
	var calls atomic.Int32
	m, v := handlers(t, fakeProvider{calls: &calls})
	old := deployment(validSpec, nil)
	updated := deployment(validSpec, func(md *clusterv1alpha1.MachineDeployment) { md.Finalizers = []string{"example.com/f"} })
	for _, h := range []admission.Handler{m, v} {
		resp := h.Handle(t.Context(), request(t, admissionv1.Update, updated, old))
		if !resp.Allowed || len(resp.Patches) > 0 {
			t.Errorf("%T: allowed %v, patches %v; want allowed without a patch", h, resp.Allowed, resp.Patches)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the provider was asked %d times, want never", n)
	}

	oldMachine := &clusterv1alpha1.Machine{TypeMeta: metav1.TypeMeta{APIVersion: "cluster.k8s.io/v1alpha1", Kind: "Machine"},
		Spec: old.Spec.Template.Spec}
	bypassed := oldMachine.DeepCopy()
	bypassed.Annotations = map[string]string{AnnotationBypassSpecImmutability: "true"}
	bypassed.Spec.Versions.Kubelet = "1.34.0"
	resp := m.Handle(t.Context(), request(t, admissionv1.Update, bypassed, oldMachine))
	if want := "/metadata/annotations/kubermatic.io~1bypass-no-spec-mutation-requirement"; !resp.Allowed || len(resp.Patches) != 1 ||
		resp.Patches[0].Operation != "remove" || resp.Patches[0].Path != want {
		t.Errorf("bypass: allowed %v, patches %v; want one removal of %s", resp.Allowed, resp.Patches, want)
	}

	resp = m.Handle(t.Context(), request(t, admissionv1.Create, deployment(validSpec, nil), nil))
	if !resp.Allowed || len(resp.Patches) == 0 {
		t.Fatalf("create: allowed %v, patches %v; want the defaults patched", resp.Allowed, resp.Patches)
	}
	for _, p := range resp.Patches {
		if !strings.HasPrefix(p.Path, "/spec/template/spec/") {
			t.Errorf("create: patch %s %s outside the template's spec", p.Operation, p.Path)
		}
	}
}

// TestRawAt: the value below keys, or false when a key is missing or a
// value on the way is no object.
func TestRawAt(t *testing.T) {
	raw := []byte(`{"metadata":{"x":1},"spec":{"replicas":1,"template":{"metadata":{},"spec":{"a":[1]}}}}`)
	for _, tc := range []struct {
		keys []string
		want string
	}{
		{keys: []string{"spec", "template", "spec"}, want: `{"a":[1]}`},
		{keys: []string{"spec", "replicas"}, want: `1`},
		{keys: []string{"spec", "missing"}},
		{keys: []string{"spec", "replicas", "spec"}},
	} {
		got, found := rawAt(raw, tc.keys)
		if string(got) != tc.want || found != (tc.want != "") {
			t.Errorf("rawAt(%v) = %s, %v; want %q", tc.keys, got, found, tc.want)
		}
	}
}

// TestValidateKubelet: versions.kubelet is required and semantic.
func TestValidateKubelet(t *testing.T) {
	for version, want := range map[string]string{
		"1.33.4": "", "v1.33.4": "", "1.34.0-rc.1": "",
		"": "Required value", "1.33": "must be a semantic version", "latest": "must be a semantic version", "v": "must be a semantic version",
	} {
		errs := validateKubelet(field.NewPath("spec"), version)
		if got := errs.ToAggregate(); (want == "") != (got == nil) || (got != nil && !strings.Contains(got.Error(), want)) {
			t.Errorf("%q: %v, want %q", version, got, want)
		}
	}
}

// FuzzAdmissionReview: no AdmissionReview body makes either webhook (as
// served, with its body limit and slots) panic, and every answer is an
// AdmissionReview.
func FuzzAdmissionReview(f *testing.F) {
	for _, spec := range []string{validSpec, legacySpec, "{}", `{"cloudProvider":1}`} {
		md, err := json.Marshal(deployment(spec, nil))
		if err != nil {
			f.Fatal(err)
		}
		for _, op := range []string{"CREATE", "UPDATE"} {
			f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","kind":{"group":"cluster.k8s.io","version":"v1alpha1","kind":"MachineDeployment"},` +
				`"operation":"` + op + `","object":` + string(md) + `,"oldObject":` + string(md) + `}}`))
			f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","kind":{"group":"cluster.k8s.io","version":"v1alpha1","kind":"Machine"},` +
				`"operation":"` + op + `","object":{"metadata":{"annotations":{"kubermatic.io/bypass-no-spec-mutation-requirement":"true"}},"spec":{"providerID":"a"}},"oldObject":{"spec":{"providerID":"b"}}}}`))
		}
	}
	f.Add([]byte(`{"request":null}`))
	f.Add([]byte(`not json`))
	m, v := handlers(f, fakeProvider{})
	slots := newLimiter(1, time.Second)
	servers := []http.Handler{&reviewServer{hook: &admission.Webhook{Handler: m}, limiter: slots}, &reviewServer{hook: &admission.Webhook{Handler: v}, limiter: slots}}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, s := range servers {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			s.ServeHTTP(rec, req)
			var review admissionv1.AdmissionReview
			if err := json.Unmarshal(rec.Body.Bytes(), &review); err != nil || review.Response == nil {
				t.Fatalf("answer is no AdmissionReview: %v: %s", err, rec.Body.String())
			}
		}
	})
}
