package main

import (
	"slices"
	"testing"
)

func TestDevHosts(t *testing.T) {
	loopback := []string{"127.0.0.1", "localhost", "::1"}
	for _, c := range []struct {
		addr, env string
		want      []string
	}{
		{"127.0.0.1:8080", "", loopback},
		{"localhost:8080", "", loopback},
		{"[::1]:8080", "", loopback},
		{"10.1.2.3:8080", "", []string{"10.1.2.3"}},
		{"127.0.0.1:8080", "a.test,b.test", []string{"a.test", "b.test"}},
	} {
		if got := devHosts(c.addr, c.env); !slices.Equal(got, c.want) {
			t.Errorf("devHosts(%q, %q) = %v, want %v", c.addr, c.env, got, c.want)
		}
	}
	if got := devHosts("0.0.0.0:8080", ""); !slices.Equal(got[:3], loopback) {
		t.Errorf("wildcard address: %v", got)
	}
}
