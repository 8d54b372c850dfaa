package ssmparam

import (
	"context"
	"testing"
)

// No SSM emulator runs here (LocalStack needs a paid token), so only the
// checks made before any call are tested; the calls themselves are the
// SDK's GetParameter / PutParameter with the inputs built above.
func TestEmptyNameRefusedBeforeAnyCall(t *testing.T) {
	ctx := context.Background()
	if _, err := Get(ctx, nil, ""); err == nil {
		t.Error("Get with an empty name")
	}
	if _, err := Put(ctx, nil, "", "v", "", false); err == nil {
		t.Error("Put with an empty name")
	}
}
