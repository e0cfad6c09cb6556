package tenant

import "testing"

func TestMatcher(t *testing.T) {
	m := Matcher{Prefix: DefaultPrefix}
	for _, tc := range []struct {
		namespace string
		want      bool
	}{
		{namespace: "cluster-abc", want: true},
		{namespace: "cluster-", want: false},
		{namespace: "default", want: false},
		{namespace: "my-cluster-abc", want: false},
		{namespace: "", want: false},
	} {
		t.Run(tc.namespace, func(t *testing.T) {
			if got := m.IsTenant(tc.namespace); got != tc.want {
				t.Errorf("IsTenant(%q) = %v, want %v", tc.namespace, got, tc.want)
			}
		})
	}
	t.Run("empty prefix matches nothing and fails validation", func(t *testing.T) {
		empty := Matcher{}
		if empty.IsTenant("cluster-abc") {
			t.Error("an empty prefix matched a namespace")
		}
		if empty.Validate() == nil {
			t.Error("Validate accepted an empty prefix")
		}
	})
}
