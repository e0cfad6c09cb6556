package infracontroller_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller"
	"github.com/kubevirt-kkp/kkp-kubevirt/pkg/infracontroller/storageclass"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/envtest"
	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

// restore is how long a hand edit in a tenant cluster may survive.
const restore = 5 * time.Second

// writes are the verbs of the requests a reconcile of the storage-class
// controller makes to a tenant cluster; the watches add WATCH requests and
// one LIST per (re)start.
var writes = []string{"LIST", "POST", "PUT", "PATCH", "DELETE"}

func TestStorageClassWatches(t *testing.T) {
	infra := infraPlane.Env(t)
	tenantEnv := envtest.Start(t)
	ctx, ic, tc := t.Context(), infra.Client, tenantEnv.Client
	s := newSpace(t, infra)
	counter := envtest.NewRequestCounter()
	o := s.options(infracontroller.DefaultOptions())
	o.Flavors = flavorsOff()
	o.StorageClasses.ResyncInterval = 0
	o.WrapTenantConfig = func(cfg *rest.Config) { cfg.WrapTransport = counter.Wrap }
	r := startController(t, infra.Config, o, nil, -1)

	createInfraClasses(t, ic, &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: "fast", Annotations: map[string]string{
			storageclass.InitializeAnnotation: "true", storageclass.DefaultClassAnnotation: "true"}},
		Provisioner: "example.com/fast",
	})
	createTenant(t, ic, s.tenant("a"), tenantEnv.KubeconfigBytes)
	fast := tenantClass("fast", "scsi", true, storagev1.VolumeBindingImmediate)
	poll.Until(t, wait, expectClasses(ctx, tc, fast))
	poll.Until(t, restore, expectWatches(r, 1))

	t.Run("a managed class deleted by hand comes back", func(t *testing.T) {
		before := getClass(t, tc, fast.Name)
		deleteClass(t, tc, fast.Name)
		poll.Until(t, restore, func() error {
			got := &storagev1.StorageClass{}
			if err := tc.Get(ctx, ctrlruntimeclient.ObjectKey{Name: fast.Name}, got); err != nil {
				return err
			}
			if got.UID == before.UID {
				return errors.New("the class was not recreated yet")
			}
			return nil
		})
		poll.Until(t, restore, expectClasses(ctx, tc, fast))
	})
	t.Run("a parameter changed by hand is restored", func(t *testing.T) {
		// Parameters cannot be updated: a hand edit is a delete and a create.
		// The controller may recreate the class in between; then try again.
		poll.Until(t, restore, func() error {
			edited := fast.DeepCopy()
			edited.Parameters["bus"] = "virtio"
			if err := tc.Delete(ctx, edited); ctrlruntimeclient.IgnoreNotFound(err) != nil {
				return err
			}
			return tc.Create(ctx, edited)
		})
		poll.Until(t, restore, expectClasses(ctx, tc, fast))
	})
	t.Run("a default-class annotation changed by hand is restored", func(t *testing.T) {
		edited := getClass(t, tc, fast.Name)
		edited.Annotations[storageclass.DefaultClassAnnotation] = "false"
		if err := tc.Update(ctx, edited); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, restore, expectClasses(ctx, tc, fast))
	})
	t.Run("after restoring, the controller goes quiet", func(t *testing.T) {
		settle(t, counter)
		counter.Reset()
		time.Sleep(2 * time.Second)
		if n := counter.Total(writes...); n != 0 {
			t.Errorf("%d requests to the tenant cluster in 2s of quiet: %v", n, counter.Counts())
		}
	})
	t.Run("a class without our label is left alone and triggers nothing", func(t *testing.T) {
		foreign := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "hand-made"}, Provisioner: "example.com/other"}
		counter.Reset()
		if err := tc.Create(ctx, foreign); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		if n := counter.Total(writes...); n != 0 {
			t.Errorf("a foreign class caused %d requests to the tenant cluster: %v", n, counter.Counts())
		}
		if got := getClass(t, tc, foreign.Name); got.ResourceVersion != foreign.ResourceVersion {
			t.Errorf("the foreign class was written: %+v", got)
		}
	})
	t.Run("a changed kubeconfig restarts the watch", func(t *testing.T) {
		other, err := tenantEnv.Kubeconfig("other")
		if err != nil {
			t.Fatal(err)
		}
		counter.Reset()
		setKubeconfig(t, ic, s.tenant("a"), other)
		watch := envtest.Request{Verb: "WATCH", Resource: "storage.k8s.io/v1/storageclasses"}
		poll.Until(t, restore, func() error {
			if n := counter.Counts()[watch]; n == 0 {
				return errors.New("the tenant cluster is not watched again yet")
			}
			return nil
		})
		poll.Until(t, restore, expectWatches(r, 1))
		deleteClass(t, tc, fast.Name)
		poll.Until(t, restore, expectClasses(ctx, tc, fast))
	})
	t.Run("removing the kubeconfig Secret stops the watch", func(t *testing.T) {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.tenant("a"), Name: "tenant-kubeconfig"}}
		if err := ic.Delete(ctx, secret); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, restore, expectWatches(r, 0))
		// With neither a watch nor a resync, a hand deletion now stays.
		deleteClass(t, tc, fast.Name)
		poll.Holds(t, time.Second, expectClasses(ctx, tc))
	})
}

func expectWatches(r *running, want int) func() error {
	return func() error {
		if got := r.controllers.StorageClasses.RunningWatches(); got != want {
			return fmt.Errorf("%d tenant clusters watched, want %d", got, want)
		}
		return nil
	}
}

// settle waits until the tenant cluster has seen no request but watches
// for half a second.
func settle(t *testing.T, counter *envtest.RequestCounter) {
	t.Helper()
	poll.Settled(t, restore, 500*time.Millisecond, "the writes to the tenant cluster", func() int { return counter.Total(writes...) })
}

func getClass(t *testing.T, c ctrlruntimeclient.Client, name string) *storagev1.StorageClass {
	t.Helper()
	sc := &storagev1.StorageClass{}
	if err := c.Get(t.Context(), ctrlruntimeclient.ObjectKey{Name: name}, sc); err != nil {
		t.Fatal(err)
	}
	return sc
}

func deleteClass(t *testing.T, c ctrlruntimeclient.Client, name string) {
	t.Helper()
	if err := c.Delete(t.Context(), &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
}

// setKubeconfig replaces the tenant kubeconfig of a namespace.
func setKubeconfig(t *testing.T, c ctrlruntimeclient.Client, namespace string, kubeconfig []byte) {
	t.Helper()
	secret := &corev1.Secret{}
	if err := c.Get(t.Context(), ctrlruntimeclient.ObjectKey{Namespace: namespace, Name: "tenant-kubeconfig"}, secret); err != nil {
		t.Fatal(err)
	}
	secret.Data["kubeconfig"] = kubeconfig
	if err := c.Update(t.Context(), secret); err != nil {
		t.Fatal(err)
	}
}
