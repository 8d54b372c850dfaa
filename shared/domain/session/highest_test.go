package session

import "testing"

// TestHighestKeepsTheHighestAndForgetsPastItsCap: a key keeps the highest
// value seen; past Cap keys everything is forgotten (reads 0 again).
func TestHighestKeepsTheHighestAndForgetsPastItsCap(t *testing.T) {
	h := Highest{Cap: 2}
	for _, step := range []struct {
		key  string
		saw  int64
		want map[string]int64
	}{
		{"a", 5, map[string]int64{"a": 5}},
		{"a", 3, map[string]int64{"a": 5}},
		{"a", 7, map[string]int64{"a": 7}},
		{"b", 1, map[string]int64{"a": 7, "b": 1}},
		{"c", 2, map[string]int64{"a": 0, "b": 0, "c": 2}},
	} {
		h.Saw(step.key, step.saw)
		for k, v := range step.want {
			if got := h.Get(k); got != v {
				t.Fatalf("after %s=%d: %s = %d, want %d", step.key, step.saw, k, got, v)
			}
		}
	}
	var zero Highest
	if zero.Get("x") != 0 {
		t.Fatal("a zero Highest knows something")
	}
	zero.Saw("x", 1)
	if zero.Get("x") != 1 {
		t.Fatal("a zero Highest is not ready")
	}
}
