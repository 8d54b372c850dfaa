package relay

import "testing"

// TestPathsAreListed: each path of pipeline.go names every step once, and
// every step of the write, read and REQ paths runs a function.
func TestPathsAreListed(t *testing.T) {
	names := map[string][]string{"live": livePath}
	for _, s := range writePath {
		names["write"] = append(names["write"], s.name)
		if s.run == nil {
			t.Errorf("write step %q runs nothing", s.name)
		}
	}
	for _, s := range readPath {
		names["read"] = append(names["read"], s.name)
		if s.run == nil {
			t.Errorf("read step %q runs nothing", s.name)
		}
	}
	for _, s := range reqPath {
		names["req"] = append(names["req"], s.name)
		if s.run == nil {
			t.Errorf("REQ step %q runs nothing", s.name)
		}
	}
	for path, list := range names {
		seen := map[string]bool{}
		if len(list) == 0 {
			t.Errorf("the %s path lists no step", path)
		}
		for _, n := range list {
			if n == "" || seen[n] {
				t.Errorf("the %s path: step %q unnamed or named twice", path, n)
			}
			seen[n] = true
		}
	}
}
