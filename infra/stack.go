package main

import (
	"fmt"
	"strconv"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2authorizers"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsrds"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/customresources"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/buzzrelay/relay/shared/wiring/lambdas"
)

// WebSocketStageName is the stage of the WebSocket API (and so the path of
// wss://{api}.execute-api.{region}.amazonaws.com/{stage}).
const WebSocketStageName = "live"

// MigrateResourceType is the CloudFormation type of the migrate custom
// resource (lambdas.MigrateResourceType).
const MigrateResourceType = lambdas.MigrateResourceType

// NewRelayStack builds the whole relay for one community:
//
//	VPC (2 AZs): public subnets (NAT, when there is one), app subnets (the
//	  functions; egress over IPv6 through an egress-only internet gateway,
//	  or IPv4 through a NAT), isolated db subnets (Aurora, no route out)
//	Aurora PostgreSQL 16 Serverless v2, 0..N ACU, idle sessions closed
//	  after 60 s so it can pause; IAM database auth for the handlers
//	KMS key that encrypts the relay's secp256k1 secret
//	provided.al2023 arm64 functions (shared/wiring/lambdas); migrate runs as
//	  a custom resource that creates the relay key and hands its ciphertext
//	  to the handlers; the push function's liveness schedule (liveness.go)
//	HTTP API + WebSocket API (dualstack, throttled) behind one CloudFront
//	  distribution (front.go; its edge upload function in a us-east-1 stack)
//	media bucket (private S3, SSE-S3, lifecycle) for Blossom, -c media
//	log groups with retention; alarms, budget, reserved concurrency opt-in
func NewRelayStack(scope constructs.Construct, s Settings) (awscdk.Stack, error) {
	zips := map[string]string{}
	for _, f := range Functions {
		p, err := checkZip(s.AssetDir, f.Name)
		if err != nil {
			return nil, err
		}
		zips[f.Name] = p
	}
	migrateHash, err := zipSHA256(zips["migrate"])
	if err != nil {
		return nil, err
	}

	stack := awscdk.NewStack(scope, jsii.String(s.StackName), &awscdk.StackProps{
		Description: jsii.String("Buzz-compatible NIP-29 relay, community " + s.Community + ", profile " + s.Profile),
	})
	awscdk.Tags_Of(stack).Add(jsii.String("app"), jsii.String("buzz-relay"), nil)
	awscdk.Tags_Of(stack).Add(jsii.String("buzz:community"), jsii.String(s.Community), nil)

	minACU := awscdk.NewCfnParameter(stack, jsii.String("DbMinCapacity"), &awscdk.CfnParameterProps{
		Type:        jsii.String("Number"),
		Default:     jsii.Number(0),
		MinValue:    jsii.Number(0),
		MaxValue:    jsii.Number(256),
		Description: jsii.String("Aurora Serverless v2 minimum ACU; 0 lets an idle database pause (about 15 s to resume)"),
	})
	maxACU := awscdk.NewCfnParameter(stack, jsii.String("DbMaxCapacity"), &awscdk.CfnParameterProps{
		Type:        jsii.String("Number"),
		Default:     jsii.Number(2),
		MinValue:    jsii.Number(1),
		MaxValue:    jsii.Number(256),
		Description: jsii.String("Aurora Serverless v2 maximum ACU"),
	})
	restore := newRestoreParameter(stack)

	// Every profile has the topic, the cost alarms and the budget
	// (alarms.go); `alarms` adds the functions' errors and throttles.
	alarms := newAlarmTopic(stack, s)
	var alarmAction awscloudwatch.IAlarmAction
	if s.Alarms {
		alarmAction = awscloudwatchactions.NewSnsAction(alarms)
	}
	alarm := func(m awscloudwatch.Metric, id, desc string, threshold float64) {
		if alarmAction == nil {
			return
		}
		m.CreateAlarm(stack, jsii.String(id), &awscloudwatch.CreateAlarmOptions{
			AlarmDescription:   jsii.String(desc),
			Threshold:          jsii.Number(threshold),
			EvaluationPeriods:  jsii.Number(1),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		}).AddAlarmAction(alarmAction)
	}

	vpc, fnSG := newNetwork(stack, s)
	appSubnets := &awsec2.SubnetSelection{SubnetType: awsec2.SubnetType_PRIVATE_WITH_EGRESS}

	// --- database --------------------------------------------------------
	dbSG := awsec2.NewSecurityGroup(stack, jsii.String("DbSg"), &awsec2.SecurityGroupProps{
		Vpc:              vpc,
		Description:      jsii.String("buzz relay Aurora: Postgres from the functions only"),
		AllowAllOutbound: jsii.Bool(false),
	})
	dbSG.AddIngressRule(fnSG, awsec2.Port_Tcp(jsii.Number(DBPort)), jsii.String("functions to Postgres"), nil)
	fnSG.AddEgressRule(dbSG, awsec2.Port_Tcp(jsii.Number(DBPort)), jsii.String("Postgres"), nil)

	engine := awsrds.DatabaseClusterEngine_AuroraPostgres(&awsrds.AuroraPostgresClusterEngineProps{
		Version: awsrds.AuroraPostgresEngineVersion_VER_16_11(),
	})
	// Connections that frozen Lambda environments leave open would keep
	// the database awake forever; the server closes them after a minute.
	params := awsrds.NewParameterGroup(stack, jsii.String("DbParams"), &awsrds.ParameterGroupProps{
		Engine:      engine,
		Description: jsii.String("buzz relay: close idle sessions so Aurora can pause"),
		Parameters: &map[string]*string{
			"idle_session_timeout": jsii.String(strconv.Itoa(IdleSessionTimeoutMs)),
		},
	})
	// Whatever the profile, the stack's deletion leaves the data (the
	// cluster, or its final snapshot) and what opens it: the KMS key that
	// seals the relay keys and push secrets stored in it, and the master
	// secret. A snapshot without its key holds relay keys no one can open
	// (destroy_test.go holds the template to this; `make destroy` lists
	// each one with its monthly cost and how to delete it).
	// RetainExceptOnCreate: kept on delete and replacement, removed when
	// the stack's first create rolls back.
	dataPolicy := awscdk.RemovalPolicy_SNAPSHOT
	keyPolicy := awscdk.RemovalPolicy_RETAIN_ON_UPDATE_OR_DELETE
	if s.RetainData {
		dataPolicy = awscdk.RemovalPolicy_RETAIN_ON_UPDATE_OR_DELETE
	}
	cluster := awsrds.NewDatabaseCluster(stack, jsii.String("Db"), &awsrds.DatabaseClusterProps{
		Engine: engine,
		Writer: awsrds.ClusterInstance_ServerlessV2(jsii.String("writer"), &awsrds.ServerlessV2ClusterInstanceProps{
			PubliclyAccessible:      jsii.Bool(false),
			AutoMinorVersionUpgrade: jsii.Bool(true),
		}),
		ServerlessV2MinCapacity: minACU.ValueAsNumber(),
		ServerlessV2MaxCapacity: maxACU.ValueAsNumber(),
		Vpc:                     vpc,
		VpcSubnets:              &awsec2.SubnetSelection{SubnetType: awsec2.SubnetType_PRIVATE_ISOLATED},
		SecurityGroups:          &[]awsec2.ISecurityGroup{dbSG},
		Port:                    jsii.Number(DBPort),
		ParameterGroup:          params,
		Credentials:             awsrds.Credentials_FromGeneratedSecret(jsii.String("buzz"), nil),
		DefaultDatabaseName:     jsii.String(DBName),
		IamAuthentication:       jsii.Bool(s.DBAuth == "iam"),
		StorageEncrypted:        jsii.Bool(true),
		DeletionProtection:      jsii.Bool(s.DeletionProtection),
		RemovalPolicy:           dataPolicy,
		Backup:                  &awsrds.BackupProps{Retention: awscdk.Duration_Days(jsii.Number(7))},
	})
	restore.apply(cluster)
	dbSecret := cluster.Secret()
	// A retained cluster, or its snapshot, keeps the credentials that open it.
	for _, c := range *cluster.Node().FindAll(constructs.ConstructOrder_PREORDER) {
		if r, ok := c.(awscdk.CfnResource); ok && *r.CfnResourceType() == "AWS::SecretsManager::Secret" {
			r.ApplyRemovalPolicy(keyPolicy, nil)
		}
	}

	// --- relay key -------------------------------------------------------
	var kek awskms.IKey
	if s.RelayKMSKey != "" {
		// A deleted stack's retained key (restore.go): the restored
		// database's relay keys are sealed with it. The stack never owns
		// it, so deleting this stack leaves it as it was.
		kek = awskms.Key_FromKeyArn(stack, jsii.String("RelayKeyKek"), jsii.String(s.RelayKMSKey))
		awskms.NewAlias(stack, jsii.String("RelayKeyAlias"), &awskms.AliasProps{AliasName: jsii.String(s.KeyAlias()), TargetKey: kek})
	} else {
		kek = awskms.NewKey(stack, jsii.String("RelayKeyKek"), &awskms.KeyProps{
			Description:       jsii.String("encrypts the buzz relay secp256k1 key, community " + s.Community),
			Alias:             jsii.String(s.KeyAlias()),
			EnableKeyRotation: jsii.Bool(s.KeyRotation),
			RemovalPolicy:     keyPolicy,
			PendingWindow:     awscdk.Duration_Days(jsii.Number(30)),
		})
	}
	keyStatement := func(sid string, actions ...string) awsiam.PolicyStatement {
		return awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:       jsii.String(sid),
			Actions:   jsii.Strings(actions...),
			Resources: jsii.Strings(*kek.KeyArn()),
			// Every community's key is sealed by this one KMS key under the
			// encryption context {"community": <id>}: calls must carry that
			// context key and no other, for any community (communities are
			// added without a deploy), never without a context.
			Conditions: &map[string]interface{}{
				"ForAllValues:StringEquals": map[string]interface{}{"kms:EncryptionContextKeys": []string{"community"}},
				"Null":                      map[string]interface{}{"kms:EncryptionContext:community": "false"},
			},
		})
	}

	// --- media ------------------------------------------------------------
	sessionTable := newSessionTable(stack)
	var media awss3.Bucket
	if s.Media {
		media = newMediaBucket(stack, s)
	}

	klipy := newKlipySecret(stack, s) // nil without -c gifs
	// --- APIs ------------------------------------------------------------
	cors := &awsapigatewayv2.CorsPreflightOptions{
		AllowOrigins: jsii.Strings("*"),
		AllowMethods: &[]awsapigatewayv2.CorsHttpMethod{awsapigatewayv2.CorsHttpMethod_GET, awsapigatewayv2.CorsHttpMethod_POST, awsapigatewayv2.CorsHttpMethod_OPTIONS},
		AllowHeaders: jsii.Strings("Authorization", "Content-Type", "Accept"),
		MaxAge:       awscdk.Duration_Hours(jsii.Number(1)),
	}
	if s.Media {
		// Blossom from a browser: BUD-01/02/06 methods and headers, and
		// the refusal's reason readable by the page.
		*cors.AllowMethods = append(*cors.AllowMethods, awsapigatewayv2.CorsHttpMethod_PUT, awsapigatewayv2.CorsHttpMethod_HEAD, awsapigatewayv2.CorsHttpMethod_DELETE)
		*cors.AllowHeaders = append(*cors.AllowHeaders, *jsii.Strings("X-SHA-256", "X-Content-Length", "X-Content-Type", "Range")...)
		cors.ExposeHeaders = jsii.Strings("X-Reason", "Location", "Content-Length", "Content-Type")
	}
	httpApi := awsapigatewayv2.NewHttpApi(stack, jsii.String("HttpApi"), &awsapigatewayv2.HttpApiProps{
		Description:   jsii.String("buzz relay HTTP bridge, community " + s.Community),
		IpAddressType: awsapigatewayv2.IpAddressType_DUAL_STACK,
		CorsPreflight: cors,
	})
	// The $default stage keeps its logical id (a new one would collide on
	// the name); its throttle is set on the generated resource.
	httpStage := httpApi.DefaultStage().Node().DefaultChild().(awsapigatewayv2.CfnStage)
	httpStage.AddPropertyOverride(jsii.String("DefaultRouteSettings"), map[string]any{
		"ThrottlingRateLimit":  s.HTTPRate,
		"ThrottlingBurstLimit": s.HTTPBurst,
	})
	wsApi := awsapigatewayv2.NewWebSocketApi(stack, jsii.String("WsApi"), &awsapigatewayv2.WebSocketApiProps{
		Description:   jsii.String("buzz relay WebSocket (NIP-01/42), community " + s.Community),
		IpAddressType: awsapigatewayv2.IpAddressType_DUAL_STACK,
		// Nostr messages are JSON arrays: route selection never matches, so
		// everything goes to $default (see design §2).
		RouteSelectionExpression: jsii.String("$request.body.action"),
	})
	wsStage := awsapigatewayv2.NewWebSocketStage(stack, jsii.String("WsStage"), &awsapigatewayv2.WebSocketStageProps{
		WebSocketApi: wsApi,
		StageName:    jsii.String(WebSocketStageName),
		AutoDeploy:   jsii.Bool(true),
		Throttle: &awsapigatewayv2.ThrottleSettings{
			RateLimit:  jsii.Number(s.WSRate),
			BurstLimit: jsii.Number(s.WSBurst),
		},
	})

	// --- the front: one hostname for both APIs (front.go) -----------------
	var upload awslambda.IVersion
	if s.Media {
		edge := newEdgeUploadStack(scope, s)
		stack.AddStackDependency(edge, jsii.String("the distribution's /media/upload behaviour runs its edge upload function"))
		upload = edgeUploadVersion(stack, s)
	}
	front := newFront(stack, s, httpApi, wsApi, upload)

	// --- functions -------------------------------------------------------
	// Each function's environment is lambdas.Environment's, with this
	// stack's resources as its references.
	var cr awscdk.CustomResource // set below, before any handler reads it
	fns := map[string]awslambda.Function{}
	schedules := newWorkflowSchedules(stack) // workflows.go
	var httpLogs []awslogs.LogGroup          // of the functions on HTTP routes, for the resume metric (alarms.go)
	envSettings := s.lambdaSettings()
	if s.Domain == "" {
		// No domain: the distribution's own name is the relay's one host.
		envSettings.PublicURL = "https://" + *front.DistributionDomainName()
	}
	refs := func(r lambdas.Ref) string {
		switch r {
		case lambdas.RefRegion:
			return *stack.Region()
		case lambdas.RefDBSecretArn:
			return *dbSecret.SecretArn()
		case lambdas.RefDBHost:
			return *cluster.ClusterEndpoint().Hostname()
		case lambdas.RefKMSKeyArn:
			return *kek.KeyArn()
		case lambdas.RefRelayKeyCiphertext:
			return *cr.GetAttString(jsii.String("RelayKeyCiphertext"))
		case lambdas.RefWSManagementEndpoint:
			return *wsStage.CallbackUrl()
		case lambdas.RefFanoutFunction:
			return *fns["fanout"].FunctionName()
		case lambdas.RefMediaBucket:
			return *media.BucketName()
		case lambdas.RefPushFunction:
			return *fns["ws-push"].FunctionName()
		case lambdas.RefPushSenderFunction:
			return *fns["push-sender"].FunctionName()
		case lambdas.RefPushDialerFunction:
			return *fns["push-dialer"].FunctionName()
		case lambdas.RefWorkflowRunnerFunction:
			return *fns["workflow-runner"].FunctionName()
		case lambdas.RefSessionTable:
			return *sessionTable.TableName()
		case lambdas.RefLiveKitSecretArn:
			return s.LiveKitSecret
		case lambdas.RefKlipySecretArn:
			return *klipy.SecretArn()
		case lambdas.RefWorkflowScheduleGroup:
			return *schedules.group.ScheduleGroupName()
		case lambdas.RefWorkflowSchedulerRoleArn:
			return *schedules.role.RoleArn()
		}
		panic(fmt.Sprintf("infra: no reference %d", r))
	}
	build := func(f Function) awslambda.Function {
		env := map[string]*string{}
		for k, v := range lambdas.Environment(f, envSettings, refs) {
			env[k] = jsii.String(v)
		}
		readsSecret := f.Migrate || (s.DBAuth == "secret" && !f.NoDB)
		connects := !f.Migrate && !f.NoDB && s.DBAuth == "iam"
		logs := awslogs.NewLogGroup(stack, jsii.String(f.Name+"-logs"), &awslogs.LogGroupProps{
			Retention:     s.LogRetention,
			RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
		})
		if httpFunctions()[f.Name] {
			httpLogs = append(httpLogs, logs)
		}
		props := &awslambda.FunctionProps{
			Description:    jsii.String("buzz relay " + f.Name),
			Runtime:        awslambda.Runtime_PROVIDED_AL2023(),
			Architecture:   awslambda.Architecture_ARM_64(),
			Handler:        jsii.String("bootstrap"),
			Code:           awslambda.Code_FromAsset(jsii.String(zips[f.Name]), nil),
			MemorySize:     jsii.Number(f.Memory),
			Timeout:        awscdk.Duration_Seconds(jsii.Number(f.Timeout)),
			Environment:    &env,
			Vpc:            vpc,
			VpcSubnets:     appSubnets,
			SecurityGroups: &[]awsec2.ISecurityGroup{fnSG},
			LogGroup:       logs,
			LoggingFormat:  awslambda.LoggingFormat_JSON,
		}
		if f.OutsideVPC() {
			outsideVPC(props) // push.go: the push dialer
		} else if s.Egress == "ipv6" {
			props.Ipv6AllowedForDualStack = jsii.Bool(true)
		}
		if f.Fanout {
			props.MaxEventAge = awscdk.Duration_Minutes(jsii.Number(FanoutMaxEventAgeMinutes))
			props.RetryAttempts = jsii.Number(FanoutRetryAttempts)
		}
		if f.SendsPush {
			pushFailures(stack, props, alarms)
		}
		if s.ReservedConcurrency > 0 && !f.DeployTime() {
			props.ReservedConcurrentExecutions = jsii.Number(float64(s.ReservedConcurrency))
		}
		fn := awslambda.NewFunction(stack, jsii.String(f.Name), props)
		if readsSecret {
			dbSecret.GrantRead(fn, nil)
		}
		if f.GIFs && klipy != nil {
			klipy.GrantRead(fn, nil) // the KLIPY key, at cold start (gifs.go)
		}
		if f.LiveKit && s.LiveKitSecret != "" {
			// The functions that read the LiveKit secret (at cold start:
			// the token endpoint, the webhook); the others only learn
			// LiveKit is on.
			awssecretsmanager.Secret_FromSecretCompleteArn(stack, jsii.String(f.Name+"-livekit-secret"), jsii.String(s.LiveKitSecret)).GrantRead(fn, nil)
		}
		if connects {
			cluster.GrantConnect(fn, jsii.String(DBUser))
		}
		switch {
		case f.Manages: // NIP-86 addcommunity seals a new community's key
			fn.AddToRolePolicy(keyStatement("SealCommunityKeys", "kms:Encrypt", "kms:Decrypt"))
		case f.Signs:
			fn.AddToRolePolicy(keyStatement("DecryptRelayKey", "kms:Decrypt"))
		}
		if f.Migrate {
			fn.AddToRolePolicy(keyStatement("CreateRelayKey", "kms:Encrypt", "kms:Decrypt"))
		}
		if f.Posts {
			wsStage.GrantManagementApiAccess(fn)
		}
		if media != nil && f.HoldsMedia() {
			grantMedia(f.Name, media, func(st awsiam.PolicyStatement) { fn.AddToRolePolicy(st) })
		}
		if f.Sessions {
			grantSessions(sessionTable, func(st awsiam.PolicyStatement) { fn.AddToRolePolicy(st) })
		}
		if media != nil && f.Directory {
			grantDirectory(media, func(st awsiam.PolicyStatement) { fn.AddToRolePolicy(st) })
		}
		if f.Dispatches {
			fns["fanout"].GrantInvoke(fn)
		}
		if f.Greets {
			fns["ws-push"].GrantInvoke(fn)
		}
		if f.SendsPush {
			fns["push-dialer"].GrantInvoke(fn) // one synchronous invoke per try
		}
		if f.Dispatches {
			fns["push-sender"].GrantInvoke(fn)     // one hand-off per commit
			fns["workflow-runner"].GrantInvoke(fn) // one hand-off per commit a workflow may act on
		}
		if f.Pushes {
			newLiveness(stack, fn)
		}
		if f.Sweeps {
			newExpirySweep(stack, fn)
		}
		if f.RunsWorkflows {
			schedules.grant(stack, fn)
		}
		if f.Fanout {
			// It invokes itself with the other parts of an audience it
			// splits (AWS_LAMBDA_FUNCTION_NAME). A policy of its own: in
			// the role's default policy, which the function depends on,
			// its own ARN would be a dependency cycle.
			awsiam.NewPolicy(stack, jsii.String(f.Name+"-invokes-itself"), &awsiam.PolicyProps{
				Roles: &[]awsiam.IRole{fn.Role()},
				Statements: &[]awsiam.PolicyStatement{awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
					Sid:       jsii.String("InvokeOtherParts"),
					Actions:   jsii.Strings("lambda:InvokeFunction"),
					Resources: jsii.Strings(*fn.FunctionArn()),
				})},
			})
		}
		period := awscdk.Duration_Minutes(jsii.Number(5))
		if f.SendsPush || f.Dials || f.RunsWorkflows {
			// No alarm of its own (each is $0.10 a month, and the idle bill
			// stays as it was): its runs fail by design while a callback is
			// retried, and a batch given up on waits in the PushFailed
			// queue (docs/push.md); the push dialer's failures are the
			// sender's failed tries, which end there too.
			fns[f.Name] = fn
			return fn
		}
		alarm(fn.MetricErrors(&awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("Sum")}),
			f.Name+"-errors", fmt.Sprintf("buzz relay %s: errors in 5 minutes", f.Name), 1)
		alarm(fn.MetricThrottles(&awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("Sum")}),
			f.Name+"-throttles", fmt.Sprintf("buzz relay %s: throttles in 5 minutes", f.Name), 1)
		fns[f.Name] = fn
		return fn
	}

	// --- migrations and the relay key -------------------------------------
	// The migrate function is the onEvent handler of a custom resource: it
	// runs once the database exists, on the first deploy and whenever its
	// zip (which embeds migrations/), the community or the key revision
	// changes; its Data carries the relay key, which the handlers'
	// environment reads, so CloudFormation orders it before them. Delete
	// does nothing (the data outlives the resource).
	// The egress check runs first: after both APIs exist, before migrate
	// (which calls KMS and Secrets Manager over the same egress) and before
	// either stage serves a route (egress.go).
	var check awscdk.CustomResource
	for _, f := range Functions {
		if f.EgressCheck {
			check = newEgressCheck(stack, s, build(f), httpApi, wsApi)
		}
	}
	wsStage.Node().AddDependency(check)
	httpApi.DefaultStage().Node().AddDependency(check)
	for _, f := range Functions {
		if f.Migrate {
			build(f)
		}
	}
	providerLogs := awslogs.NewLogGroup(stack, jsii.String("migrate-provider-logs"), &awslogs.LogGroupProps{
		Retention:     s.LogRetention,
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	provider := customresources.NewProvider(stack, jsii.String("MigrateProvider"), &customresources.ProviderProps{
		OnEventHandler: fns["migrate"],
		LogGroup:       providerLogs,
	})
	cr = awscdk.NewCustomResource(stack, jsii.String("Migrate"), &awscdk.CustomResourceProps{
		ServiceToken:   provider.ServiceToken(),
		ResourceType:   jsii.String(MigrateResourceType),
		Properties:     ptr(migrateProperties(lambdas.MigrateProperties(envSettings, migrateHash, refs), cluster)),
		ServiceTimeout: awscdk.Duration_Minutes(jsii.Number(10)),
	})
	cr.Node().AddDependency(cluster, check)
	for _, f := range Deployed(s) {
		if !f.DeployTime() {
			// Functions that read no attribute wait for it too: no handler
			// runs against a database the release has not migrated.
			build(f).Node().AddDependency(cr)
		}
	}

	// --- routes ----------------------------------------------------------
	httpRoute := func(fn, method, path string) {
		m := map[string]awsapigatewayv2.HttpMethod{
			"GET": awsapigatewayv2.HttpMethod_GET, "POST": awsapigatewayv2.HttpMethod_POST, "PUT": awsapigatewayv2.HttpMethod_PUT,
			"HEAD": awsapigatewayv2.HttpMethod_HEAD, "DELETE": awsapigatewayv2.HttpMethod_DELETE,
			"PATCH": awsapigatewayv2.HttpMethod_PATCH, // the admin API's feedback status
		}[method]
		if m == "" {
			panic("infra: route " + method + " " + path + ": a method API Gateway is not given here")
		}
		httpApi.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
			Path:        jsii.String(path),
			Methods:     &[]awsapigatewayv2.HttpMethod{m},
			Integration: awsapigatewayv2integrations.NewHttpLambdaIntegration(jsii.String(fn+"-"+method+path), fns[fn], nil),
		})
	}
	for _, r := range lambdas.HTTPRoutes {
		if r.GIFs() && !s.GIFs {
			continue // no KLIPY key: no GIF proxy (gifs.go)
		}
		httpRoute(r.Function, r.Method, r.Path)
	}
	if s.Media {
		for _, r := range lambdas.MediaRoutes {
			httpRoute(r.Function, r.Method, r.Path)
		}
	}

	wsIntegration := func(route string) awsapigatewayv2.WebSocketRouteIntegration {
		fn := lambdas.WebSocketRoutes[route]
		return awsapigatewayv2integrations.NewWebSocketLambdaIntegration(jsii.String(fn), fns[fn], nil)
	}
	connect := &awsapigatewayv2.WebSocketRouteOptions{Integration: wsIntegration(lambdas.RouteConnect)}
	if fn, ok := fns["ws-authorize"]; ok {
		connect.Authorizer = awsapigatewayv2authorizers.NewWebSocketLambdaAuthorizer(jsii.String("HostAuthorizer"), fn,
			&awsapigatewayv2authorizers.WebSocketLambdaAuthorizerProps{IdentitySource: jsii.Strings("route.request.header.Host")})
	}
	wsApi.AddRoute(jsii.String(lambdas.RouteConnect), connect)
	for _, route := range []string{lambdas.RouteDefault, lambdas.RouteDisconnect} {
		wsApi.AddRoute(jsii.String(route), &awsapigatewayv2.WebSocketRouteOptions{Integration: wsIntegration(route)})
	}

	newCostAlarms(stack, s, alarms, cluster, httpApi, httpLogs)

	if s.BudgetUSD > 0 {
		newBudget(stack, s, alarms)
	}

	// --- outputs ---------------------------------------------------------
	out := func(id string, v *string, desc string) {
		awscdk.NewCfnOutput(stack, jsii.String(id), &awscdk.CfnOutputProps{Value: v, Description: jsii.String(desc)})
	}
	publicURL := "https://" + *front.DistributionDomainName()
	if s.Domain != "" {
		publicURL = "https://" + s.Domain
	}
	out("PublicUrl", jsii.String(publicURL), "the relay's one URL: https:// for NIP-11 and the HTTP bridge, wss:// on the same host for nostr clients (the Buzz app takes this one URL)")
	out("CloudFrontDomain", front.DistributionDomainName(), "the distribution's own name (with -c domain: the CNAME/ALIAS target for the domain)")
	out("HttpUrl", httpApi.ApiEndpoint(), "the HTTP API behind the distribution (no large uploads, another host than wss://)")
	out("WebSocketUrl", wsStage.Url(), "the WebSocket API behind the distribution")
	out("RelayPubkey", cr.GetAttString(jsii.String("RelayPubkey")), "the relay's pubkey (NIP-11 self), created by the first deploy")
	out("RelayKeyKmsKeyArn", kek.KeyArn(), "KMS key that encrypts the relay key")
	out("DbSecretArn", dbSecret.SecretArn(), "Aurora master credentials (read by migrate only)")
	if media != nil {
		out("MediaBucketName", media.BucketName(), "private S3 bucket of the media (Blossom) blobs; retained when the stack is deleted")
	}
	if klipy != nil {
		out("KlipySecretArn", klipy.SecretArn(), "Secrets Manager secret of the GIF proxy's KLIPY key (-c gifs=true)")
	}
	out("AlarmTopicArn", alarms.TopicArn(), "SNS topic of the alarms and the budget (subscribe to it: -c alarmEmail)")
	checkWithNag(stack, s)
	return stack, nil
}

func ptr[T any](v T) *T { return &v }
