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

func TestValues(t *testing.T) {
	v := NewValues[int](2)
	v.Put("a", 1)
	v.Put("b", 2)
	v.Get("a")    // a is now the newest
	v.Put("c", 3) // b goes
	v.Put("a", 4)
	v.Drop("c")
	tests := []struct {
		key  string
		want int
		ok   bool
	}{{"a", 4, true}, {"b", 0, false}, {"c", 0, false}}
	for _, tc := range tests {
		if got, ok := v.Get(tc.key); got != tc.want || ok != tc.ok {
			t.Errorf("Get(%q) = %d, %v, want %d, %v", tc.key, got, ok, tc.want, tc.ok)
		}
	}
}
