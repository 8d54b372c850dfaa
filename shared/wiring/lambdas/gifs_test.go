package lambdas

import "testing"

// TestKlipySecretReachesOnlyTheGIFFunction: with GIFs on, the function
// that serves the GIF routes (and only it) gets KLIPY_SECRET_ARN; with
// GIFs off, none does, so the proxy is off and NIP-11 does not advertise
// it. Every GIF route reaches a function marked GIFs.
func TestKlipySecretReachesOnlyTheGIFFunction(t *testing.T) {
	refs := func(r Ref) string {
		if r == RefKlipySecretArn {
			return "arn:klipy"
		}
		return "x"
	}
	for _, f := range Functions {
		on := Environment(f, Settings{GIFs: true, DBAuth: "iam"}, refs)["KLIPY_SECRET_ARN"]
		off, offSet := Environment(f, Settings{DBAuth: "iam"}, refs)["KLIPY_SECRET_ARN"]
		if (on == "arn:klipy") != f.GIFs || offSet {
			t.Errorf("%s: KLIPY_SECRET_ARN on %q, off %q", f.Name, on, off)
		}
	}
	gifRoutes := 0
	for _, r := range HTTPRoutes {
		if !r.GIFs() {
			continue
		}
		gifRoutes++
		if f, ok := ByName(r.Function); !ok || !f.GIFs {
			t.Errorf("%s reaches %s, which does not read the KLIPY secret", r.Key(), r.Function)
		}
	}
	if gifRoutes != 2 {
		t.Errorf("%d GIF routes, want POST /gifs/search and /gifs/share", gifRoutes)
	}
}
