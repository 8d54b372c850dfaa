package lambdas

import "strconv"

// Database settings shared by the stack, localdev's processes mode and
// their tests.
const (
	DBName = "buzz"
	// DBUser is the role the request-path functions log in as with IAM
	// auth; migrate creates it (DB_IAM_USER) and grants it rds_iam.
	DBUser = "buzz_relay"
	DBPort = 5432
	// DBIdleTimeout is the pool's MaxConnIdleTime (DB_IDLE_TIMEOUT), below
	// the cluster's idle_session_timeout so an awake pool closes first.
	DBIdleTimeout = "30s"
	// DBConnectTimeout bounds one connection attempt on the request path
	// (DB_CONNECT_TIMEOUT); a resuming Aurora answers 503 + Retry-After
	// sooner than the 28 s function timeout. Migrate waits for a resume.
	DBConnectTimeout        = "5s"
	MigrateDBConnectTimeout = "60s"
	DBMaxConns              = 2
)

// HostHeader is the header CloudFront's router copies the viewer's Host
// into; the functions read it (BUZZ_HOST_HEADER) when the stack serves
// several hostnames.
const HostHeader = "x-buzz-host"

// Settings are the synth-time choices the environment depends on (a
// subset of infra's Settings).
type Settings struct {
	Community, LogLevel string
	// DBAuth is "iam" or "secret"; Egress "ipv6", "nat-gateway" or
	// "nat-instance"; KMSEndpoint: a KMS interface endpoint in the VPC.
	DBAuth, Egress   string
	KMSEndpoint      bool
	RelayKeyRevision string
	// Domain is the public domain (BUZZ_COMMUNITY_HOST of migrate);
	// PublicURL is BUZZ_PUBLIC_URL ("" for none); Hostnames: the stack
	// serves several hostnames (BUZZ_HOST_HEADER, the authorizer).
	Domain, PublicURL string
	Hostnames         bool
	// Owner is the default community's first NIP-86 operator (an npub or
	// hex, `make deploy OWNER=...`), the migrate custom resource's Owner
	// property; "" none.
	Owner string
	// Media: the media bucket exists; its limits are MediaLimits.
	Media       bool
	MediaLimits MediaLimits
	// PushGateway is the NIP-PL push gateway's delivery URL and
	// PushProfiles its app profiles ("id=apns,..."); empty: leases off
	// (NIP-9a subscriptions are always served).
	PushGateway, PushProfiles string
	// LiveKit: NIP-29 LiveKit is on (RefLiveKitSecretArn names its
	// secret).
	LiveKit bool
	// GIFs: Buzz's GIF proxy is on (RefKlipySecretArn names the secret
	// holding the KLIPY key; infra's -c gifs creates it).
	GIFs bool
}

// MediaLimits are the media functions' MEDIA_* limits.
type MediaLimits struct {
	MaxBytes, DirectMaxBytes, KeyBytesPerDay, CommunityBytesStored int64
	PresignTTL                                                     string
}

// Ref names a value only the deployment knows (in CDK a token, in localdev
// a local address).
type Ref int

// The references Environment asks for.
const (
	RefRegion Ref = iota
	RefDBSecretArn
	RefDBHost
	RefKMSKeyArn
	RefRelayKeyCiphertext // the migrate custom resource's attribute
	RefWSManagementEndpoint
	RefFanoutFunction
	RefMediaBucket
	RefPushFunction
	RefPushSenderFunction
	RefPushDialerFunction
	RefSessionTable
	RefLiveKitSecretArn
	RefKlipySecretArn
	RefWorkflowRunnerFunction
	// RefWorkflowScheduleGroup and RefWorkflowSchedulerRoleArn: the
	// EventBridge Scheduler group the runner keeps its schedules in and
	// the role those schedules invoke it with.
	RefWorkflowScheduleGroup
	RefWorkflowSchedulerRoleArn
)

// Refs resolves a Ref; Environment asks only for those f uses, so a
// reference that does not exist yet (the custom resource, while migrate
// itself is built) is never asked for.
type Refs func(Ref) string

// Environment is the environment function f starts with in a stack with
// settings s; refs resolves the deployment's values.
func Environment(f Function, s Settings, refs Refs) map[string]string {
	env := map[string]string{
		"BUZZ_COMMUNITY":     s.Community,
		"BUZZ_PUBLIC_SCHEME": "https",
		"LOG_LEVEL":          s.LogLevel,
	}
	if !f.NoDB {
		env["DB_SSLMODE"] = "require"
	}
	usesKMS := f.Migrate || f.Signs
	if f.Migrate {
		env["DB_SECRET_ARN"] = refs(RefDBSecretArn)
		env["DB_CONNECT_TIMEOUT"] = MigrateDBConnectTimeout
		env["RELAY_KMS_KEY_ID"] = refs(RefKMSKeyArn)
		if s.DBAuth == "iam" {
			env["DB_IAM_USER"] = DBUser
		}
		if s.Domain != "" {
			env["BUZZ_COMMUNITY_HOST"] = s.Domain
		}
	} else if !f.NoDB {
		env["DB_MAX_CONNS"] = strconv.Itoa(DBMaxConns)
		env["DB_CONNECT_TIMEOUT"] = DBConnectTimeout
		env["DB_IDLE_TIMEOUT"] = DBIdleTimeout
		if s.DBAuth == "iam" {
			env["DB_AUTH"] = "iam"
			env["DB_HOST"] = refs(RefDBHost)
			env["DB_PORT"] = strconv.Itoa(DBPort)
			env["DB_NAME"] = DBName
			env["DB_USER"] = DBUser
		} else {
			env["DB_AUTH"] = "secret"
			env["DB_SECRET_ARN"] = refs(RefDBSecretArn)
		}
	}
	if !f.Migrate && s.PublicURL != "" {
		env["BUZZ_PUBLIC_URL"] = s.PublicURL
	}
	if !f.Migrate && s.Hostnames {
		env["BUZZ_HOST_HEADER"] = HostHeader
	}
	if f.Signs {
		env["RELAY_SIGNER"] = "kms"
		env["RELAY_KMS_KEY_ID"] = refs(RefKMSKeyArn)
		env["RELAY_KEY_REVISION"] = s.RelayKeyRevision
		env["RELAY_KEY_CIPHERTEXT"] = refs(RefRelayKeyCiphertext)
	}
	if f.Posts {
		env["WS_MANAGEMENT_ENDPOINT"] = refs(RefWSManagementEndpoint)
	}
	if f.Dispatches {
		env["FANOUT_FUNCTION"] = refs(RefFanoutFunction)
	}
	if f.Greets {
		env["PUSH_FUNCTION"] = refs(RefPushFunction)
	}
	// Push notifications: the committing functions hand commits to the
	// sender, which (like NIP-11 on query) needs to know push is on; the
	// gateway and its app profiles when leases are served (docs/push.md).
	if f.Dispatches || f.Manages || f.SendsPush {
		if f.SendsPush {
			// Its own name would make the template reference itself; it
			// invokes nothing, the value only turns push on.
			env["PUSH_SENDER_FUNCTION"] = f.Name
		} else {
			env["PUSH_SENDER_FUNCTION"] = refs(RefPushSenderFunction)
		}
		if f.SendsPush {
			// Each try's request goes to the dialer outside the VPC.
			env["PUSH_DIALER_FUNCTION"] = refs(RefPushDialerFunction)
		}
		if s.PushGateway != "" {
			env["PUSH_GATEWAY_URL"] = s.PushGateway
			env["PUSH_APP_PROFILES"] = s.PushProfiles
		}
	}
	// Workflows: the committing functions hand commits to the runner; the
	// runner invokes itself to go on with a long run (by its own name,
	// AWS_LAMBDA_FUNCTION_NAME, as a reference to itself would make the
	// template circular) and keeps its schedules in its group, each
	// targeting its own ARN (the invocation's) with the scheduler's role.
	if f.Dispatches {
		env["WORKFLOW_RUNNER_FUNCTION"] = refs(RefWorkflowRunnerFunction)
	}
	if f.RunsWorkflows {
		env["WORKFLOW_SCHEDULE_GROUP"] = refs(RefWorkflowScheduleGroup)
		env["WORKFLOW_SCHEDULER_ROLE_ARN"] = refs(RefWorkflowSchedulerRoleArn)
	}
	// Over egress=ipv6 every call needs an endpoint with an AAAA record:
	// EndpointURL and SetsEndpoint (endpoints.go) name it per service.
	region := refs(RefRegion)
	if (f.Dispatches || f.Fanout || f.Greets || f.RunsWorkflows || f.SendsPush) && SetsEndpoint(s, SvcLambda) {
		env["LAMBDA_ENDPOINT"] = EndpointURL(s, region, SvcLambda)
	}
	if usesKMS && SetsEndpoint(s, SvcKMS) {
		env["AWS_ENDPOINT_URL_KMS"] = EndpointURL(s, region, SvcKMS)
	}
	if s.Media && f.HoldsMedia() && SetsEndpoint(s, SvcS3) {
		// Presigned URLs carry this host too, which browsers reach over
		// IPv4 or IPv6.
		env["AWS_ENDPOINT_URL_S3"] = EndpointURL(s, region, SvcS3)
	}
	if f.Sessions {
		env["SESSION_TABLE"] = refs(RefSessionTable)
	}
	// NIP-29 LiveKit: the token endpoint's and the webhook's functions
	// read the secret; the
	// other signing functions get its ARN only to know LiveKit is on (a
	// group's 39000 then carries the livekit tag) and never read it.
	if s.LiveKit && (f.LiveKit || f.Signs) && !f.Migrate && !f.NoDB && !f.RunsWorkflows {
		env["LIVEKIT_SECRET_ARN"] = refs(RefLiveKitSecretArn)
	}
	// Buzz's GIF proxy: the function that serves /gifs/* reads the KLIPY
	// key at cold start; without it the routes are not deployed and
	// NIP-11 does not advertise GIFs.
	if s.GIFs && f.GIFs {
		env["KLIPY_SECRET_ARN"] = refs(RefKlipySecretArn)
	}
	if s.Media && f.Directory {
		env["DIRECTORY_BUCKET"] = refs(RefMediaBucket)
	}
	if s.Media && f.HoldsMedia() {
		mediaEnv(s, refs, env)
	}
	return env
}

// mediaEnv is the media part of a media function's environment.
func mediaEnv(s Settings, refs Refs, env map[string]string) {
	l := s.MediaLimits
	env["MEDIA_BUCKET"] = refs(RefMediaBucket)
	env["MEDIA_MAX_BYTES"] = strconv.FormatInt(l.MaxBytes, 10)
	env["MEDIA_DIRECT_MAX_BYTES"] = strconv.FormatInt(l.DirectMaxBytes, 10)
	env["MEDIA_KEY_BYTES_PER_DAY"] = strconv.FormatInt(l.KeyBytesPerDay, 10)
	env["MEDIA_COMMUNITY_BYTES_STORED"] = strconv.FormatInt(l.CommunityBytesStored, 10)
	env["MEDIA_PRESIGN_TTL"] = l.PresignTTL
}
