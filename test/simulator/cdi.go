package simulator

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/kubevirt-kkp/kkp-kubevirt/test/importer"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrlruntimeclient "sigs.k8s.io/controller-runtime/pkg/client"
)

// The termination messages CDI's programs write on success; cdi-controller
// parses the importer's and the upload server's as JSON.
const (
	importCompleteMessage = `{"scratchSpaceRequired":false,"preallocationApplied":false,"message":"Import Complete"}`
	blankCompleteMessage  = `{"preallocationApplied":false,"message":"Import Complete"}`
	cloneCompleteMessage  = `{"preallocationApplied":false,"message":"Clone Complete"}`
	clonerCompleteMessage = "Clone Complete"
)

// cdiPrograms play CDI's worker images: the importer (HTTP, blank and size
// detection), the host-assisted clone's upload server and cloner.
type cdiPrograms struct {
	client     ctrlruntimeclient.Client
	delay      time.Duration // how long a transfer takes
	importHTTP bool          // download HTTP sources for real
	httpClient *http.Client

	mu         sync.Mutex
	downloaded map[types.UID]bool
}

// programs returns the programs by image name.
func (c *cdiPrograms) programs() map[string]program {
	return map[string]program{
		"cdi-importer":     {run: c.importer, noPodIP: true},
		"cdi-uploadserver": {run: c.uploadServer, noPodIP: true},
		"cdi-cloner":       {run: c.cloner, noPodIP: true},
	}
}

// importer writes the image of the pod's source into its volume: an HTTP
// image takes the transfer delay (and is downloaded with importHTTP), a
// blank one ends at once; in size detection mode it reports the size of the
// source volume.
func (c *cdiPrograms) importer(ctx context.Context, pod *corev1.Pod, status *corev1.ContainerStatus) (outcome, error) {
	if status.Name == "size-detection-volume" {
		return c.sizeDetection(ctx, pod)
	}
	env := containerEnv(pod, status.Name)
	if env["IMPORTER_SOURCE"] == "none" {
		return outcome{done: true, message: blankCompleteMessage}, nil
	}
	if env["IMPORTER_SOURCE"] == "http" && c.importHTTP {
		if err := c.download(ctx, pod.UID, env["IMPORTER_ENDPOINT"]); err != nil {
			// The real importer exits 1 with the error, and its container
			// is restarted (restartPolicy OnFailure): try again.
			return outcome{recheck: time.Second}, fmt.Errorf("failed to import %s: %w", env["IMPORTER_ENDPOINT"], err)
		}
	}
	if left := remaining(status, c.delay); left > 0 {
		return outcome{recheck: left}, nil
	}
	return outcome{done: true, message: importCompleteMessage}, nil
}

// download fetches url once per pod.
func (c *cdiPrograms) download(ctx context.Context, uid types.UID, url string) error {
	c.mu.Lock()
	done := c.downloaded[uid]
	c.mu.Unlock()
	if done {
		return nil
	}
	if _, err := importer.Download(ctx, c.httpClient, url); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.downloaded == nil {
		c.downloaded = map[types.UID]bool{}
	}
	c.downloaded[uid] = true
	return nil
}

// sizeDetection reports the virtual size of the image on the source volume
// the pod mounts: here, its capacity.
func (c *cdiPrograms) sizeDetection(ctx context.Context, pod *corev1.Pod) (outcome, error) {
	for _, vol := range pod.Spec.Volumes {
		if vol.PersistentVolumeClaim == nil {
			continue
		}
		pvc := &corev1.PersistentVolumeClaim{}
		if err := c.client.Get(ctx, ctrlruntimeclient.ObjectKey{Namespace: pod.Namespace, Name: vol.PersistentVolumeClaim.ClaimName}, pvc); err != nil {
			return outcome{}, err
		}
		size := pvc.Status.Capacity[corev1.ResourceStorage]
		return outcome{done: true, message: fmt.Sprint(size.Value())}, nil
	}
	return outcome{done: true, exitCode: 3, message: "no source volume"}, nil
}

// uploadServer receives a clone: it ends once the clone's source pod has
// sent the data (run for the transfer delay) or ended.
func (c *cdiPrograms) uploadServer(ctx context.Context, pod *corev1.Pod, _ *corev1.ContainerStatus) (outcome, error) {
	target := pod.Labels["cdi.kubevirt.io/uploadTarget"]
	sources := &corev1.PodList{}
	if err := c.client.List(ctx, sources, ctrlruntimeclient.MatchingLabels{"cdi.kubevirt.io": "cdi-clone-source"}); err != nil {
		return outcome{}, err
	}
	for i := range sources.Items {
		source := &sources.Items[i]
		if target == "" || source.Name != target+"-source-pod" || len(source.Status.ContainerStatuses) == 0 {
			continue
		}
		if finished(source) {
			return outcome{done: true, message: cloneCompleteMessage}, nil
		}
		if left := remaining(&source.Status.ContainerStatuses[0], c.delay); left > 0 {
			return outcome{recheck: left}, nil
		}
		return outcome{done: true, message: cloneCompleteMessage}, nil
	}
	return outcome{recheck: time.Second}, nil
}

// cloner sends its volume to the upload server for the transfer delay.
func (c *cdiPrograms) cloner(_ context.Context, _ *corev1.Pod, status *corev1.ContainerStatus) (outcome, error) {
	if left := remaining(status, c.delay); left > 0 {
		return outcome{recheck: left}, nil
	}
	return outcome{done: true, message: clonerCompleteMessage}, nil
}

// remaining is how much of d a running container still has to run.
func remaining(status *corev1.ContainerStatus, d time.Duration) time.Duration {
	if status.State.Running == nil {
		return 0
	}
	return time.Until(status.State.Running.StartedAt.Add(d))
}

// containerEnv returns the literal environment of a container.
func containerEnv(pod *corev1.Pod, name string) map[string]string {
	out := map[string]string{}
	for _, c := range pod.Spec.Containers {
		if c.Name != name {
			continue
		}
		for _, e := range c.Env {
			out[e.Name] = strings.TrimSpace(e.Value)
		}
	}
	return out
}
