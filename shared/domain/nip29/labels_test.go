package nip29_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/nbd-wtf/go-nostr"

	"github.com/buzzrelay/relay/shared/domain/nip29"
)

func TestLabels(t *testing.T) {
	long := strings.Repeat("a", 64)
	cases := []struct {
		name    string
		tags    nostr.Tags
		want    []string
		present bool
		err     string
	}{
		{"no t tag", tags([]string{"h", "x"}), []string{}, false, ""},
		{"one label", tags([]string{"t", "agent-config"}), []string{"agent-config"}, true, ""},
		{"stored order and repeats once", tags([]string{"t", "b"}, []string{"t", "a"}, []string{"t", "b"}), []string{"b", "a"}, true, ""},
		{"all allowed characters", tags([]string{"t", "a-z.0:9"}), []string{"a-z.0:9"}, true, ""},
		{"64 characters", tags([]string{"t", long}), []string{long}, true, ""},
		{"65 characters", tags([]string{"t", long + "a"}), nil, true, "invalid: label"},
		{"uppercase", tags([]string{"t", "Config"}), nil, true, "invalid: label"},
		{"space", tags([]string{"t", "a b"}), nil, true, "invalid: label"},
		{"underscore", tags([]string{"t", "a_b"}), nil, true, "invalid: label"},
		{"reserved stream", tags([]string{"t", "stream"}), nil, true, "invalid: label \"stream\" is a channel type"},
		{"reserved forum", tags([]string{"t", "forum"}), nil, true, "invalid:"},
		{"reserved dm", tags([]string{"t", "dm"}), nil, true, "invalid:"},
		{"reserved workflow", tags([]string{"t", "workflow"}), nil, true, "invalid:"},
		{"reserved system", tags([]string{"t", "system"}), nil, true, "invalid:"},
		{"clear", tags([]string{"t", ""}), []string{}, true, ""},
		{"valueless t", tags([]string{"t"}), nil, true, "invalid: a t tag needs a value"},
		{"clear twice", tags([]string{"t", ""}, []string{"t", ""}), []string{}, true, ""},
		{"clear mixed with label", tags([]string{"t", ""}, []string{"t", "a"}), nil, true, `invalid: ["t",""] clears`},
		{"eight labels", tags([]string{"t", "1"}, []string{"t", "2"}, []string{"t", "3"}, []string{"t", "4"}, []string{"t", "5"}, []string{"t", "6"}, []string{"t", "7"}, []string{"t", "8"}), []string{"1", "2", "3", "4", "5", "6", "7", "8"}, true, ""},
		{"eight distinct with a repeat", tags([]string{"t", "1"}, []string{"t", "2"}, []string{"t", "3"}, []string{"t", "4"}, []string{"t", "5"}, []string{"t", "6"}, []string{"t", "7"}, []string{"t", "8"}, []string{"t", "1"}), []string{"1", "2", "3", "4", "5", "6", "7", "8"}, true, ""},
		{"nine labels", tags([]string{"t", "1"}, []string{"t", "2"}, []string{"t", "3"}, []string{"t", "4"}, []string{"t", "5"}, []string{"t", "6"}, []string{"t", "7"}, []string{"t", "8"}, []string{"t", "9"}), nil, true, "invalid: 9 distinct labels"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, present, err := nip29.Labels(c.tags)
			if c.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), c.err) {
					t.Fatalf("want error %q, got %v", c.err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if present != c.present || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %v present=%v, want %v present=%v", got, present, c.want, c.present)
			}
		})
	}
}

func FuzzLabels(f *testing.F) {
	f.Add("agent-config", "", "x")
	f.Add("stream", "a:b", "")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		got, _, err := nip29.Labels(tags([]string{"t", a}, []string{"t", b}, []string{"t", c}))
		if err != nil {
			return
		}
		if len(got) > nip29.MaxLabels {
			t.Fatalf("accepted %d labels", len(got))
		}
		for _, l := range got {
			if !nip29.ValidLabel(l) {
				t.Fatalf("accepted invalid label %q", l)
			}
		}
	})
}
