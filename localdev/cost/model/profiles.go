package model

import (
	"fmt"
	"maps"
	"slices"
)

// profileStacks are the stacks infra/settings.go's profiles synthesize
// with their default egress, as the bill assumes them when no template is
// given. infra's TestCostModelMatchesTemplate synthesizes each profile and
// egress and fails listing every difference (Diff), so a change to the
// template that costs money is made here too.
var profileStacks = map[string]Stack{
	"community": {
		Functions: relayFunctions,
		LogGroups: 16, LogRetentionDays: 7, // the functions', two provider frameworks', the edge upload version reader's
		// every profile: Aurora awake too long, HTTP 5xx less resume 503s,
		// a push delivery given up (infra/push.go), their topic and the
		// monthly budget (infra/alarms.go)
		Alarms: 3, Topics: 1, Budgets: 1,
		KMSKeys: 1, Secrets: 1, Buckets: 1,
		Distributions: 1, // the one hostname (infra/front.go)
		Database:      relayDatabase,
		// the liveness ticks; the push sender's on-failure queue, which
		// nothing polls
		Schedules: 1, Queues: 2,
		Sweeps: 1, // the NIP-40 expiry sweep
		Tables: 1, // the sessions'
	},
	"managed": {
		Functions: relayFunctions,
		LogGroups: 16, LogRetentionDays: 90,
		// errors and throttles of the ten functions (with egresscheck and
		// expiry-sweep; none for the push sender: docs/push.md), and every
		// profile's three (Aurora awake, HTTP 5xx, push given up)
		Alarms: 23, Budgets: 1,
		KMSKeys: 1, Rotating: 1, Secrets: 1, Buckets: 1, Topics: 1,
		Distributions: 1,
		Database:      relayDatabase,
		Schedules:     1, Queues: 2,
		Sweeps: 1,
		Tables: 1,
	},
}

// profileEgress is each profile's default egress (infra/settings.go).
var profileEgress = map[string]string{"community": "ipv6", "managed": "nat-gateway"}

// networks are the egress choices (-c egress) as the template has them.
var networks = map[string]Network{
	"ipv6":         {Egress: "ipv6"},
	"nat-gateway":  {Egress: "nat-gateway", NATGateways: 1, PublicIPv4: 1},
	"nat-instance": {Egress: "nat-instance", NATInstances: []string{"t4g.nano"}, PublicIPv4: 1, Alarms: 1},
}

// relayFunctions are infra.Functions as deployed without -c hostnames, and
// the functions CDK adds that only deploys run: the provider framework's
// onEvent functions of the migrate and EgressCheck custom resources and
// the handler that strips the VPC's default security group
// (@aws-cdk/aws-ec2:restrictDefaultSecurityGroup), and the
// AwsCustomResource handler that reads the edge upload function's version
// in us-east-1 (infra/front.go; the edge function itself is in a stack of
// its own and runs only for uploads above the direct limit).
var relayFunctions = []Function{
	{"CustomVpcRestrictDefaultSGCustomResourceProviderHandler", 128, "x86_64"},
	{"AWS679f53fac002430cb0da5b7982bd2287", 128, "x86_64"},
	{"EgressCheckProviderframeworkonEvent", 128, "x86_64"},
	{"MigrateProviderframeworkonEvent", 128, "x86_64"},
	{"egresscheck", 128, "arm64"},
	{"expiry-sweep", 256, "arm64"},
	{"fanout", 512, "arm64"},
	{"ingest", 512, "arm64"},
	{"migrate", 256, "arm64"},
	{"push-dialer", 128, "arm64"},
	{"push-sender", 256, "arm64"},
	{"query", 512, "arm64"},
	{"workflow-runner", 256, "arm64"},
	{"ws-connect", 256, "arm64"},
	{"ws-disconnect", 256, "arm64"},
	{"ws-message", 512, "arm64"},
	{"ws-push", 128, "arm64"},
}

var relayDatabase = Database{Instances: 1, MinACU: 0, AutoPauseSeconds: DefaultAutoPauseSeconds, PoolIdleSeconds: 30, ServerIdleSeconds: 60}

// Profiles are the profile names, sorted.
func Profiles() []string { return slices.Sorted(maps.Keys(profileStacks)) }

// Assumed is the stack of profile with egress ("" = the profile's own).
func Assumed(profile, egress string) (Stack, error) {
	s, ok := profileStacks[profile]
	if !ok {
		return Stack{}, fmt.Errorf("profile must be community or managed, got %q", profile)
	}
	if egress == "" {
		egress = profileEgress[profile]
	}
	n, ok := networks[egress]
	if !ok {
		return Stack{}, fmt.Errorf("egress must be ipv6, nat-gateway or nat-instance, got %q", egress)
	}
	s.Network = n
	s.Functions = append([]Function(nil), s.Functions...)
	return s, nil
}
