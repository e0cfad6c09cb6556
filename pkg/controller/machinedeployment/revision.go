package machinedeployment

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8c.io/machine-controller/sdk/apis/cluster/common"
	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"

	"k8s.io/apimachinery/pkg/util/rand"
)

// LabelTemplateHash labels a MachineSet, its selector and its template
// with the hash of the MachineDeployment template it was made from.
const LabelTemplateHash = common.DefaultMachineDeploymentUniqueLabelKey

// canonicalTemplate returns the template as a generic JSON value without
// the hash label, so that two templates compare equal whatever the key
// order and whitespace of their providerSpecs.
func canonicalTemplate(t *clusterv1alpha1.MachineTemplateSpec) (any, error) {
	t = t.DeepCopy()
	delete(t.Labels, LabelTemplateHash)
	if len(t.Labels) == 0 {
		t.Labels = nil
	}
	raw, err := json.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("failed to encode the Machine template: %w", err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("failed to decode the Machine template: %w", err)
	}
	return out, nil
}

// templateHash returns a short, label-safe hash of the template (without
// the hash label).
func templateHash(t *clusterv1alpha1.MachineTemplateSpec) (string, error) {
	c, err := canonicalTemplate(t)
	if err != nil {
		return "", err
	}
	// encoding/json writes map keys sorted: the encoding is canonical.
	raw, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("failed to encode the Machine template: %w", err)
	}
	h := fnv.New32a()
	_, _ = h.Write(raw)
	return rand.SafeEncodeString(strconv.FormatUint(uint64(h.Sum32()), 10)), nil
}

// sameTemplate tells whether two templates are equal, ignoring the hash
// label and the encoding of the providerSpec.
func sameTemplate(a, b *clusterv1alpha1.MachineTemplateSpec) (bool, error) {
	ca, err := canonicalTemplate(a)
	if err != nil {
		return false, err
	}
	cb, err := canonicalTemplate(b)
	if err != nil {
		return false, err
	}
	return reflect.DeepEqual(ca, cb), nil
}

// revisionOf returns the revision annotation of an object, 0 when absent
// or invalid.
func revisionOf(annotations map[string]string) int64 {
	v, err := strconv.ParseInt(annotations[common.RevisionAnnotation], 10, 64)
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// maxRevision returns the highest revision of the MachineSets.
func maxRevision(sets []*clusterv1alpha1.MachineSet) int64 {
	var out int64
	for _, ms := range sets {
		out = max(out, revisionOf(ms.Annotations))
	}
	return out
}

// setRevision gives annotations the revision; a different revision they
// held is appended to the revision history. It reports whether anything
// changed.
func setRevision(annotations map[string]string, revision int64) bool {
	old := annotations[common.RevisionAnnotation]
	next := strconv.FormatInt(revision, 10)
	if old == next {
		return false
	}
	annotations[common.RevisionAnnotation] = next
	if old != "" {
		history := strings.Split(annotations[common.RevisionHistoryAnnotation], ",")
		history = slices.DeleteFunc(append(history, old), func(s string) bool { return s == "" })
		annotations[common.RevisionHistoryAnnotation] = strings.Join(history, ",")
	}
	return true
}

// setReplicaAnnotations records the desired and maximum replicas of the
// MachineDeployment on a MachineSet's annotations and reports whether
// they changed.
func setReplicaAnnotations(annotations map[string]string, desired, maxReplicas int32) bool {
	before := maps.Clone(annotations)
	annotations[common.DesiredReplicasAnnotation] = strconv.FormatInt(int64(desired), 10)
	annotations[common.MaxReplicasAnnotation] = strconv.FormatInt(int64(maxReplicas), 10)
	return !maps.Equal(before, annotations)
}
