package kubevirt

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/cloudprovider/kubevirt/infra"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
)

// rbacDoc is the documentation whose RBAC block the test applies.
const rbacDoc = "../../../docs/provider.md"

// TestRBACFromDocs grants a ServiceAccount exactly the RBAC documented in
// docs/provider.md and runs a Machine that references every kind of infra
// object through the provider with that account's token.
func TestRBACFromDocs(t *testing.T) {
	env := sharedEnv(t)
	f := newFixture(t, env)
	f.references(t)
	ctx := t.Context()

	for _, obj := range documentedRBAC(t, f.namespace) {
		// The ClusterRole is the same for every namespace.
		if err := env.Client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("failed to create %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "kubevirt-kkp-provider", Namespace: f.namespace}}
	f.create(t, sa)
	token := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}
	if err := env.Client.SubResource("token").Create(ctx, sa, token); err != nil {
		t.Fatalf("failed to issue a token: %v", err)
	}
	kubeconfig, err := env.TokenKubeconfig(token.Status.Token, f.namespace)
	if err != nil {
		t.Fatal(err)
	}

	// Short sync timeout: a missing permission shows as an informer that
	// never syncs.
	p := New(Options{Clients: newClients(t, infra.Options{SyncTimeout: 3 * time.Second}), Client: env.Client})
	data := &cloudprovider.ProviderData{Client: env.Client}
	spec := specFor(t, kubeconfig, "", f.storageClass, `
cloudProviderSpec:
  auth: {namespace: null}
  virtualMachine:
    flavor: {name: small}
    instancetype: {name: `+f.namespace+`-cluster-type}
    preference: {name: ns-pref}
    networks: [{name: storage-net}]
    sshService: {type: NodePort}
    template:
      primaryDisk:
        storageAccessType: null
        extraHeadersSecretRef: headers
        dataVolumeSecretRef: basic-auth
      secondaryDisks: [{size: 1Gi, storageClassName: `+f.storageClass+`}]
`)
	m := machine("rbac", spec)
	if _, err := p.AddDefaults(ctx, nil, m.Spec); err != nil {
		t.Fatalf("AddDefaults: %v", err)
	}
	if err := p.Validate(ctx, nil, m.Spec); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if _, err := p.Get(ctx, nil, m, data); !errors.Is(err, cloudprovider.ErrInstanceNotFound) {
		t.Fatalf("Get: got %v, want ErrInstanceNotFound", err)
	}
	if _, err := p.Create(ctx, nil, m, data, testUserData); err != nil {
		t.Fatalf("Create: %v", err)
	}
	if _, err := p.Create(ctx, nil, m, data, testUserData); err != nil {
		t.Fatalf("second Create: %v", err)
	}
	if _, err := p.Get(ctx, nil, m, data); err != nil {
		t.Fatalf("Get: %v", err)
	}
	poll.UntilTrue(t, 30*time.Second, "Cleanup finishes", func() (bool, error) { return p.Cleanup(ctx, nil, m, data) })
}

// documentedRBAC returns the objects of the YAML block after the
// infra-rbac marker in docs/provider.md, moved to namespace.
func documentedRBAC(t *testing.T, namespace string) []*unstructured.Unstructured {
	t.Helper()
	doc, err := os.ReadFile(rbacDoc)
	if err != nil {
		t.Fatal(err)
	}
	_, block, found := strings.Cut(string(doc), "<!-- infra-rbac -->\n```yaml\n")
	block, _, closed := strings.Cut(block, "```")
	if !found || !closed {
		t.Fatalf("%s has no YAML block after <!-- infra-rbac -->", rbacDoc)
	}
	block = strings.ReplaceAll(block, "tenant-a", namespace)
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewBufferString(block), 4096)
	var objs []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		if err := decoder.Decode(&obj.Object); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("failed to decode the RBAC block: %v", err)
		}
		objs = append(objs, obj)
	}
	if len(objs) != 4 {
		t.Fatalf("the RBAC block has %d objects, want Role, RoleBinding, ClusterRole and ClusterRoleBinding", len(objs))
	}
	return objs
}
