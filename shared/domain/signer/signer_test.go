package signer

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// A hex secret file is created once (mode 0600), then read back as it is;
// processes racing to create it all get the one that won.
func TestLoadOrCreateHex(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys", "relay.key")
	calls := 0
	create := func() (string, error) { calls++; return "ab12", nil }
	h, err := LoadOrCreateHex(path, "test key", create)
	if err != nil || h != "ab12" || calls != 1 {
		t.Fatalf("first: %q %v, %d creations", h, err, calls)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("file mode: %v %v", fi, err)
	}
	if h, err = LoadOrCreateHex(path, "test key", create); err != nil || h != "ab12" || calls != 1 {
		t.Fatalf("second: %q %v, %d creations", h, err, calls)
	}

	race := filepath.Join(t.TempDir(), "race.key")
	var wg sync.WaitGroup
	got := make([]*Key, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := LoadOrCreateFile(race)
			if err != nil {
				t.Error(err)
				return
			}
			got[i] = k
		}()
	}
	wg.Wait()
	for _, k := range got {
		if k == nil || k.PublicKey() != got[0].PublicKey() {
			t.Fatal("racing loaders got different keys")
		}
	}
}
