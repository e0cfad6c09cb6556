package envtest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certutil "k8s.io/client-go/util/cert"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/poll"
)

// CDINamespace is where CDI's components live, as kubevirt-installer
// installs them.
const CDINamespace = "cdi"

// cdiControllerLock serializes cdi-controller processes on this machine:
// cdi-controller binds its metrics to the fixed port 8443.
var cdiControllerLock = filepath.Join(os.TempDir(), "kubevirt-kkp-cdi-controller.lock")

// cdiControllerScript runs cdi-controller in a mount namespace of its own
// (see privateMounts):
// it reads its token signing keys and the upload server's signing CAs from
// fixed paths under /var/run and writes /tmp/ready, so both /run and /tmp are
// private tmpfs there, and the host's stay untouched. $1 holds the keys, the
// CAs and the kubeconfig, $2 is cdi-controller, the rest its arguments. The
// binary's directory is bind-mounted under /run first: it may itself be
// under /tmp (a cache or a build directory there), which the tmpfs covers.
const cdiControllerScript = `set -e
src=$1; bin=$2; shift 2
mount -t tmpfs tmpfs /run
mkdir -p /run/cdi/token/keys /run/cdi/bin /run/certs/cdi-uploadserver-signer /run/certs/cdi-uploadserver-client-signer
cp "$src/id_rsa" "$src/id_rsa.pub" /run/cdi/token/keys/
cp "$src/server-signer.crt" /run/certs/cdi-uploadserver-signer/tls.crt
cp "$src/server-signer.key" /run/certs/cdi-uploadserver-signer/tls.key
cp "$src/client-signer.crt" /run/certs/cdi-uploadserver-client-signer/tls.crt
cp "$src/client-signer.key" /run/certs/cdi-uploadserver-client-signer/tls.key
cp "$src/kubeconfig" /run/cdi/kubeconfig
mount --bind "${bin%/*}" /run/cdi/bin
mount -t tmpfs tmpfs /tmp
exec "/run/cdi/bin/${bin##*/}" "$@" -kubeconfig /run/cdi/kubeconfig`

// WithCDIController runs CDI's cdi-controller beside the API server under
// the RBAC CDI generates for it, with the CDI CR kubevirt-installer's cdi
// chart renders: DataVolumes get PVCs and importer, cloner and upload server
// pods, StorageProfiles follow StorageClasses. Nothing runs the pods or
// provisions the volumes; a test plays the kubelets, the scheduler and a
// provisioner. It implies WithControllerManager (volume binding and
// protection). Only one cdi-controller runs on a machine at a time (it binds
// the fixed port 8443); a second waits for the first to stop. It also runs
// CDI's admission, as WithKubeVirt does: cdi-apiserver's webhooks served by
// CDI's own handlers (CDITool webhooks) under cdi-apiserver's RBAC and
// registered with the configurations cdi-operator writes, so every
// DataVolume, DataImportCron and the CDI CR are defaulted and validated by
// CDI v1.65.0 before they are stored.
func WithCDIController() Option {
	return func(o *options) { o.cdiController, o.controllerManager = true, true }
}

var cdiControllerIdentity = identity{
	tool: CDITool, rbacArgs: []string{"controller-rbac", "-namespace", CDINamespace},
	namespace: CDINamespace, name: "cdi-sa",
}

// cdiLockTimeout bounds the wait for another cdi-controller on the machine.
const cdiLockTimeout = 30 * time.Minute

// startCDI installs the CDI CR and starts cdi-controller.
func (e *Env) startCDI(ctx context.Context) error {
	unlock, err := lockFile(ctx, cdiControllerLock, 0)
	if errors.Is(err, errLocked) {
		// Waiting does not use a CPU: the slot goes to another test
		// process meanwhile and is taken again after the wait.
		err = withoutSlot(ctx, func() error {
			unlock, err = lockFile(ctx, cdiControllerLock, cdiLockTimeout)
			return err
		})
	}
	if err != nil {
		return fmt.Errorf("failed to wait for another cdi-controller on this machine to stop: %w", err)
	}
	e.unlocks = append(e.unlocks, unlock)
	ctx, cancel := context.WithTimeout(ctx, kubeVirtStartTimeout)
	defer cancel()
	if err := e.ensureNamespace(ctx, CDINamespace); err != nil {
		return err
	}
	cdi, err := ChartObject("cdi", "CDI")
	if err != nil {
		return err
	}
	// cdi-operator marks its CR so that cdi-controller takes the CR's
	// configuration (feature gates among it) into the CDIConfig.
	cdi.SetAnnotations(map[string]string{"cdi.kubevirt.io/configAuthority": ""})
	if err := e.Client.Create(ctx, cdi); err != nil {
		return fmt.Errorf("failed to create the CDI CR: %w", err)
	}
	_, kubeconfig, err := e.componentConfig(ctx, cdiControllerIdentity, nil)
	if err != nil {
		return err
	}
	dir := filepath.Join(e.workDir, "cdi-controller")
	if err := e.writeCDIFiles(ctx, dir, kubeconfig); err != nil {
		return err
	}
	if err := e.uploadSigners(ctx, dir); err != nil {
		return err
	}
	images, err := chartImages("cdi")
	if err != nil {
		return err
	}
	wrap, err := privateMounts()
	if err != nil {
		return err
	}
	err = e.startComponent(ctx, processSpec{
		name: "cdi-controller", path: CDIController,
		wrap: append(wrap, "sh", "-c", cdiControllerScript, "cdi-controller", dir),
		env: []string{
			"IMPORTER_IMAGE=" + images["importer"], "CLONER_IMAGE=" + images["cloner"],
			"UPLOADSERVER_IMAGE=" + images["uploadServer"], "OVIRT_POPULATOR_IMAGE=" + images["importer"],
			"UPLOADPROXY_SERVICE=cdi-uploadproxy", "PULL_POLICY=IfNotPresent",
		},
		startGrace: time.Second,
		// cdi-controller exits when it loses its lease ("leader election
		// lost"), as when the API server restarts and its authorizer
		// refuses the renewals until it has caught up; its Deployment's pod
		// would restart.
		restartOnExit: true,
	})
	if err != nil {
		return err
	}
	return e.waitLeader(ctx, CDINamespace, "cdi-controller-leader-election-helper")
}

// cdiSigningKeySecret is the Secret cdi-apiserver keeps its token signing
// key pair in (created by CDI's own code when CDI's admission starts);
// cdi-operator mounts it into cdi-controller, which checks the clone tokens
// cdi-apiserver's admission signs with it.
const cdiSigningKeySecret = "cdi-api-signing-key"

// writeCDIFiles writes what cdi-controller reads from fixed paths: the RSA
// key pair of cdi-apiserver's signing key Secret and its kubeconfig.
func (e *Env) writeCDIFiles(ctx context.Context, dir, kubeconfig string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	keys := &corev1.Secret{}
	if err := e.Client.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: CDINamespace, Name: cdiSigningKeySecret}, keys); err != nil {
		return fmt.Errorf("failed to read cdi-apiserver's signing key: %w", err)
	}
	raw, err := os.ReadFile(kubeconfig)
	if err != nil {
		return err
	}
	files := map[string][]byte{"kubeconfig": raw}
	for _, name := range []string{"id_rsa", "id_rsa.pub"} {
		if len(keys.Data[name]) == 0 {
			return fmt.Errorf("secret %s/%s has no %s", CDINamespace, cdiSigningKeySecret, name)
		}
		files[name] = keys.Data[name]
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// errLocked is in lockFile's error when another process still holds the
// lock when the timeout has passed (at once for 0).
var errLocked = errors.New("held by another process")

// lockFile takes an exclusive lock on path, waiting up to timeout while
// another process holds it (not at all for 0: errLocked), and returns its
// release.
func lockFile(ctx context.Context, path string, timeout time.Duration) (func() error, error) {
	f, err := openShared(path)
	if err != nil {
		return nil, err
	}
	// poll.Wait checks once before it looks at the timeout, so 0 tries once.
	err = poll.Wait(ctx, timeout, func() error {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("%s is %w", path, errLocked)
		}
		return poll.Final(err)
	})
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return f.Close, nil
}

// openShared opens path for flock, creating it readable for every user:
// the lock is the machine's, whoever takes it first. An existing file is
// opened without O_CREATE, which the kernel refuses (fs.protected_regular)
// on another user's file in a sticky directory such as /tmp.
func openShared(path string) (*os.File, error) {
	f, err := os.Open(path) //nolint:gosec // the lock's own path
	if err == nil {
		// A lock made private by an older version: its owner opens it up.
		_ = f.Chmod(0o644)
		return f, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("failed to open the lock %s: %w", path, err)
	}
	f, err = os.OpenFile(path, os.O_CREATE|os.O_RDONLY, 0o644) //nolint:gosec // the lock's own path
	if err != nil {
		return nil, fmt.Errorf("failed to create the lock %s: %w", path, err)
	}
	// Not limited by the umask: others open it too.
	if err := f.Chmod(0o644); err != nil {
		return nil, errors.Join(fmt.Errorf("failed to make the lock %s readable: %w", path, err), f.Close())
	}
	return f, nil
}

// uploadSigners creates what cdi-operator provides for host-assisted clones:
// the CAs that sign the upload servers' certificates and their clients', as
// files for cdi-controller and as bundle ConfigMaps for the pods.
func (e *Env) uploadSigners(ctx context.Context, dir string) error {
	for _, signer := range []struct{ file, configMap string }{
		{"server-signer", "cdi-uploadserver-signer-bundle"},
		{"client-signer", "cdi-uploadserver-client-signer-bundle"},
	} {
		ca, err := newCA(signer.file)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, signer.file+".crt"), ca.certPEM, 0o600); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, signer.file+".key"), ca.keyPEM, 0o600); err != nil {
			return err
		}
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: CDINamespace, Name: signer.configMap},
			Data:       map[string]string{"ca-bundle.crt": string(ca.certPEM)},
		}
		if err := e.Client.Create(ctx, cm); err != nil {
			return fmt.Errorf("failed to create ConfigMap %s: %w", signer.configMap, err)
		}
	}
	return nil
}

// ca is a self-signed certificate authority in PEM.
type ca struct{ certPEM, keyPEM []byte }

func newCA(name string) (*ca, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	cert, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: name}, key)
	if err != nil {
		return nil, fmt.Errorf("failed to create CA %s: %w", name, err)
	}
	return &ca{
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
	}, nil
}
