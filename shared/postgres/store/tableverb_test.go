package store_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strings"
	"testing"
)

// storeTables are the names a store method starts with: a table, in the
// plural it has in SQL (PushSubscriptions: push_subscriptions), or one of
// the few aggregates a doc.go group names (Bans, Audience, MediaUsage,
// Operators, ...). doc.go lists them with the verbs.
var storeTables = []string{
	"Audience", "BannedEvents", "Bans", "BlobUploads", "Blobs", "ChannelMembers",
	"ChannelStateHeads", "Channels", "Communities", "CommunityHosts", "Connections",
	"DMs", "Deliveries", "Events", "GroupInvites", "Invites", "JoinPolicies", "KeyData",
	"LiveKitParticipants", "LoginRoles", "MediaKeyDays", "MediaStored", "MediaUsage",
	"ModerationActions", "ModerationReports", "NIP98Seen", "Operators", "ProductFeedback", "PubkeyRules",
	"PushDeliveries", "PushRates", "PushSubscriptions", "RateCounters", "ReadMarks", "RelayMembers", "Resumes",
	"Subscriptions", "ThreadMetadata", "Vanished",
	"WorkflowApprovals", "WorkflowRuns", "WorkflowSteps", "Workflows",
}

// storeVerbs are what a store method does to its table (doc.go says what
// each means).
var storeVerbs = []string{
	"Get", "List", "Count", "Exists", "Check", "Insert", "Upsert", "Put", "Update",
	"Set", "Add", "Delete", "Lock", "Claim", "Take", "Revoke", "Ensure", "Enable", "Disable",
}

// storeDoors are the methods that are no table's: the pool, the write
// transaction and the read snapshot, and what they report.
var storeDoors = map[string]bool{
	"Close": true, "Ping": true, "Tx": true, "Read": true, "ReadPlain": true,
	"Statements": true, "Status": true, "Community": true,
}

// TestStoreMethodsAreTableVerb: every exported method of *Store and *Tx is
// named Table+Verb (+ what it qualifies), as river names JobGetByID: the
// table it reads or writes first, then what it does, so a caller reads
// which table a call touches and a newcomer finds the method by its table.
func TestStoreMethodsAreTableVerb(t *testing.T) {
	name := regexp.MustCompile(`^(` + strings.Join(storeTables, "|") + `)(` + strings.Join(storeVerbs, "|") + `)([A-Z0-9]\w*)?$`)
	fset := token.NewFileSet()
	n := 0
	for f, src := range sources(t) {
		file, err := parser.ParseFile(fset, f, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || !fd.Name.IsExported() {
				continue
			}
			star, ok := fd.Recv.List[0].Type.(*ast.StarExpr)
			if !ok {
				continue
			}
			recv, ok := star.X.(*ast.Ident)
			if !ok || recv.Name != "Store" && recv.Name != "Tx" {
				continue
			}
			n++
			if !storeDoors[fd.Name.Name] && !name.MatchString(fd.Name.Name) {
				t.Errorf("%s: (*%s).%s is not Table+Verb (doc.go: the tables and verbs)", fset.Position(fd.Pos()), recv.Name, fd.Name.Name)
			}
		}
	}
	if n < 100 {
		t.Errorf("%d methods of *Store and *Tx: the test is not looking at the store", n)
	}
}
