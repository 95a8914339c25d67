package recent

import "testing"

func TestKeys(t *testing.T) {
	k := New(2)
	steps := []struct {
		key  string
		want bool
	}{
		{"a", true}, {"a", false}, {"b", true}, {"c", true}, // a is dropped
		{"a", true}, {"c", false},
	}
	for i, s := range steps {
		if got := k.First(s.key); got != s.want {
			t.Errorf("step %d: First(%q) = %v, want %v", i, s.key, got, s.want)
		}
	}
	k.Forget("c")
	if !k.First("c") {
		t.Errorf("First(%q) after Forget = false, want true", "c")
	}
}
