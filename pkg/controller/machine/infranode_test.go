package machine

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestParseLabelKeys(t *testing.T) {
	keys, err := ParseLabelKeys(" example.com/rack,\ntopology.example.com/row\r\n,,example.com/rack, bad key ,-x")
	if diff := cmp.Diff([]string{"example.com/rack", "topology.example.com/row"}, keys); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	if err == nil || err.Error() != "invalid label keys in labels: bad key, -x" {
		t.Errorf("error %v, want one naming the two invalid keys", err)
	}
	if keys, err := ParseLabelKeys(""); len(keys) != 0 || err != nil {
		t.Errorf("empty: %v, %v", keys, err)
	}
}

func TestSyncInfraLabels(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"own": "1"}}}
	if !syncInfraLabels(node, map[string]string{"rack": "r1", "row": "a"}) {
		t.Fatal("first sync reported no change")
	}
	if node.Annotations[AnnotationInfraNodeLabels] != "rack,row" || node.Labels["rack"] != "r1" || node.Labels["own"] != "1" {
		t.Fatalf("after the first sync: labels %v, annotations %v", node.Labels, node.Annotations)
	}
	if syncInfraLabels(node, map[string]string{"rack": "r1", "row": "a"}) {
		t.Error("an unchanged sync reported a change")
	}
	// row left the list (or the infra node): it goes, a label we did not
	// copy stays.
	if !syncInfraLabels(node, map[string]string{"rack": "r2"}) {
		t.Fatal("a changed sync reported no change")
	}
	want := map[string]string{"own": "1", "rack": "r2"}
	if diff := cmp.Diff(want, node.Labels); diff != "" || node.Annotations[AnnotationInfraNodeLabels] != "rack" {
		t.Errorf("labels (-want +got):\n%s annotation %q", diff, node.Annotations[AnnotationInfraNodeLabels])
	}
	syncInfraLabels(node, nil)
	if _, ok := node.Annotations[AnnotationInfraNodeLabels]; ok || node.Labels["rack"] != "" {
		t.Errorf("after emptying the list: labels %v, annotations %v", node.Labels, node.Annotations)
	}
}
