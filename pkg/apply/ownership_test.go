package apply

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// created is a live object as a Create by manager "m" leaves it, with the
// managed fields the API server records for it.
func created(fields string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{}
	cm.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: "m", Operation: metav1.ManagedFieldsOperationApply, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:gone":{}}}`)},
		{Manager: "other", Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:theirs":{}}}`)},
		{Manager: "m", Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)},
	})
	return cm
}

func TestNeedsMigration(t *testing.T) {
	want := map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"a": "1"}},
		"spec": map[string]any{
			"rules":      []any{map[string]any{"verbs": []any{"get"}}},
			"containers": []any{map[string]any{"name": "c", "image": "i"}},
			"finalizers": []any{"x"},
		},
	}
	tests := []struct {
		name   string
		fields string
		needs  bool
	}{
		{name: "every field still set", fields: `{"f:metadata":{"f:labels":{".":{},"f:a":{}}},"f:spec":{"f:rules":{}}}`, needs: false},
		{name: "a label no longer set", fields: `{"f:metadata":{"f:labels":{"f:a":{},"f:b":{}}}}`, needs: true},
		{name: "an item of an associative list still set", fields: `{"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{}}}}}`, needs: false},
		{name: "an item of an associative list no longer set", fields: `{"f:spec":{"f:containers":{"k:{\"name\":\"d\"}":{".":{}}}}}`, needs: true},
		{name: "a field of a list item no longer set", fields: `{"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{"f:command":{}}}}}`, needs: true},
		{name: "a set value still set", fields: `{"f:spec":{"f:finalizers":{"v:\"x\"":{}}}}`, needs: false},
		{name: "a set value no longer set", fields: `{"f:spec":{"f:finalizers":{"v:\"y\"":{}}}}`, needs: true},
		{name: "an index beyond the list", fields: `{"f:spec":{"f:rules":{"i:1":{}}}}`, needs: true},
		{name: "fields that do not decode", fields: `{`, needs: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := needsMigration(created(tc.fields), want, "m"); got != tc.needs {
				t.Errorf("needsMigration = %t, want %t", got, tc.needs)
			}
		})
	}
	if needsMigration(created(`{"f:spec":{"f:gone":{}}}`), want, "someone-else") {
		t.Error("another manager's Update entry asked for a migration")
	}
}
