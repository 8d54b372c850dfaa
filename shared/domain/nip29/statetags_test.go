package nip29_test

import (
	"reflect"
	"testing"

	"github.com/buzzrelay/relay/shared/domain/nip29"
)

func TestStateTagOrder(t *testing.T) {
	ch := &nip29.Channel{ID: "c", Name: "n", Type: "system", Visibility: "private", Flags: nip29.VisibilityFlags("private"), Labels: []string{"x", "y"}, Creator: "pk", CreatedAt: 17}
	got := nip29.MetadataTags(ch)
	want := tags([]string{"d", "c"}, []string{"t", "system"}, []string{"t", "x"}, []string{"t", "y"}, []string{"P", "pk"}, []string{"created_at", "17"},
		[]string{"name", "n"}, []string{"channel_type", "system"}, []string{"private"}, []string{"closed"}, []string{"hidden"}, []string{"restricted"})
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("39000 tags\n got %v\nwant %v", got, want)
	}
	members := []nip29.MemberRole{{Pubkey: "a", Role: "owner"}, {Pubkey: "b", Role: "member"}}
	if got := nip29.AdminsTags(ch, members); !reflect.DeepEqual(got[:5], want[:5]) || !reflect.DeepEqual(got[5:], tags([]string{"p", "a", "owner"})) {
		t.Fatalf("39001 tags %v", got)
	}
	if got := nip29.MembersTags(ch, members); !reflect.DeepEqual(got[5:], tags([]string{"p", "a", "", "owner"}, []string{"p", "b", "", "member"})) {
		t.Fatalf("39002 tags %v", got)
	}
}
