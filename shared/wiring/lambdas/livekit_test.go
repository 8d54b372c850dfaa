package lambdas

import "testing"

// TestLiveKitSecretReachesTheSigningFunctions: with LiveKit on, query
// (the token endpoint) and the functions that sign a group's 39000 get
// LIVEKIT_SECRET_ARN; no other function does, and none with LiveKit off.
func TestLiveKitSecretReachesTheSigningFunctions(t *testing.T) {
	refs := func(r Ref) string {
		if r == RefLiveKitSecretArn {
			return "arn:lk"
		}
		return "x"
	}
	want := map[string]bool{"query": true, "ingest": true, "ws-message": true, "push-sender": true}
	for _, f := range Functions {
		on := Environment(f, Settings{LiveKit: true, DBAuth: "iam"}, refs)["LIVEKIT_SECRET_ARN"]
		off := Environment(f, Settings{DBAuth: "iam"}, refs)["LIVEKIT_SECRET_ARN"]
		if (on == "arn:lk") != want[f.Name] || off != "" {
			t.Errorf("%s: LIVEKIT_SECRET_ARN on %q, off %q", f.Name, on, off)
		}
	}
	for _, name := range []string{"query", "ingest"} {
		if f, _ := ByName(name); !f.LiveKit {
			t.Errorf("%s reads the LiveKit secret (token endpoint, webhook)", name)
		}
	}
}
