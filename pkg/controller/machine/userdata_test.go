package machine

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"k8c.io/machine-controller/sdk/apis/cluster/common"
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	"k8c.io/machine-controller/sdk/bootstrap"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

func TestRenderUserData(t *testing.T) {
	for _, tc := range []struct {
		name, raw, want string
	}{
		{name: "placeholder", raw: "#cloud-config\nhostname: <MACHINE_NAME>\n", want: "#cloud-config\nhostname: m-1\n"},
		{name: "escaped placeholder", raw: "url: http://x/?n=%3CMACHINE_NAME%3E\n", want: "url: http://x/?n=m-1\n"},
		{name: "blank lines dropped", raw: "a: 1\n   \n\t\nb: 2", want: "a: 1\nb: 2\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, renderUserData(tc.raw, "m-1")); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDefaultUserData(t *testing.T) {
	for _, tc := range []struct {
		name    string
		raw     string
		want    string
		wantErr bool
	}{
		{name: "no spec", want: "#cloud-config\nfqdn: m-1\nhostname: m-1\n"},
		{
			name: "ssh keys",
			raw:  `{"sshPublicKeys": ["ssh-ed25519 AAAA a@b", "ssh-rsa BBBB: c"]}`,
			want: "#cloud-config\nfqdn: m-1\nhostname: m-1\nssh_authorized_keys:\n- ssh-ed25519 AAAA a@b\n- 'ssh-rsa BBBB: c'\n",
		},
		{name: "broken spec", raw: `{"sshPublicKeys": 3}`, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &clusterv1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m-1"}}
			if tc.raw != "" {
				m.Spec.ProviderSpec.Value = &runtime.RawExtension{Raw: []byte(tc.raw)}
			}
			got, err := defaultUserData(m)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestUserData(t *testing.T) {
	md := &clusterv1alpha1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Name: "md", Namespace: "kube-system", UID: "md-uid"}}
	ms := &clusterv1alpha1.MachineSet{ObjectMeta: metav1.ObjectMeta{
		Name: "ms", Namespace: "kube-system", UID: "ms-uid",
		Annotations:     map[string]string{common.RevisionAnnotation: "2"},
		OwnerReferences: []metav1.OwnerReference{ownerRef("MachineDeployment", md.Name, md.UID)},
	}}
	machine := &clusterv1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{
		Name: "m-1", Namespace: "kube-system",
		OwnerReferences: []metav1.OwnerReference{ownerRef("MachineSet", ms.Name, ms.UID)},
	}}
	secret := func(revision string) *corev1.Secret {
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Name: "md-kube-system-bootstrap-config", Namespace: bootstrap.CloudInitSettingsNamespace,
				Annotations: map[string]string{bootstrap.MachineDeploymentRevision: revision},
			},
			Data: map[string][]byte{BootstrapSecretKey: []byte("#cloud-config\nhostname: <MACHINE_NAME>\n")},
		}
	}
	for _, tc := range []struct {
		name    string
		objs    []ctrlruntimeclient.Object
		machine *clusterv1alpha1.Machine
		want    string
		wantErr string
	}{
		{name: "OSM secret", objs: []ctrlruntimeclient.Object{ms, secret("2")}, machine: machine, want: "#cloud-config\nhostname: m-1\n"},
		{name: "OSM secret of another revision", objs: []ctrlruntimeclient.Object{ms, secret("1")}, machine: machine, wantErr: "is for revision 1"},
		{name: "no OSM secret", objs: []ctrlruntimeclient.Object{ms}, machine: machine, want: "#cloud-config\nfqdn: m-1\nhostname: m-1\n"},
		{
			name: "standalone Machine", objs: []ctrlruntimeclient.Object{secret("2")},
			machine: &clusterv1alpha1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m-1", Namespace: "kube-system"}},
			want:    "#cloud-config\nfqdn: m-1\nhostname: m-1\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newFakeClient(t, tc.objs...)
			got, err := userDataOf(t.Context(), c, &bootstrapSecrets{direct: c}, tc.machine)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func ownerRef(kind, name string, uid types.UID) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: clusterv1alpha1.SchemeGroupVersion.String(), Kind: kind, Name: name,
		UID: uid, Controller: ptr.To(true),
	}
}
