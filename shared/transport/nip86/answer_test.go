package nip86

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/buzzrelay/relay/shared/domain/reject"
)

// TestAnswer: NIP-86's one table from a call's outcome to its answer.
func TestAnswer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		result any
		err    error
		status int
		prefix string // Response.Error's
		ok     bool
	}{
		{"result", true, nil, http.StatusOK, "", true},
		{"not an operator", nil, ErrForbidden, http.StatusForbidden, "restricted: ", true},
		{"a bad call", nil, reject.Invalidf("unsupported method %q", "x"), http.StatusBadRequest, "invalid: ", true},
		{"a refused call, whatever its prefix", nil, fmt.Errorf("x: %w", reject.Restrictedf("default community only")), http.StatusBadRequest, "restricted: ", true},
		{"an internal failure", nil, errors.New("db down"), 0, "", false},
	} {
		status, resp, ok := Answer(tc.result, tc.err)
		if status != tc.status || ok != tc.ok || !strings.HasPrefix(resp.Error, tc.prefix) || (tc.prefix == "") != (resp.Error == "") {
			t.Errorf("%s: %d %+v %v, want %d %q… %v", tc.name, status, resp, ok, tc.status, tc.prefix, tc.ok)
		}
		if tc.err == nil && resp.Result != tc.result {
			t.Errorf("%s: result %v", tc.name, resp.Result)
		}
	}
}
