package main

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsrds"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/aws-cdk-go/awscdk/v2/triggers"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// WebSocketStageName is the stage of the WebSocket API (and so the path of
// wss://{api}.execute-api.{region}.amazonaws.com/{stage}).
const WebSocketStageName = "live"

// NewRelayStack builds the whole relay for one community:
//
//	VPC (2 AZs): public subnets (NAT), private subnets with egress (the
//	  functions), isolated subnets (Aurora, no route out or in)
//	Aurora PostgreSQL 16 Serverless v2, 0..N ACU, credentials in Secrets Manager
//	KMS key that encrypts the relay's secp256k1 secret (SSM parameter)
//	six provided.al2023 arm64 functions, the migrate one run as a trigger
//	HTTP API (events, query, count, NIP-11, healthz), WebSocket API + stage
//	log groups with retention, alarms on errors and throttles
func NewRelayStack(scope constructs.Construct, s Settings) (awscdk.Stack, error) {
	zips := map[string]string{}
	for _, f := range Functions {
		p, err := checkZip(s.AssetDir, f.Name)
		if err != nil {
			return nil, err
		}
		zips[f.Name] = p
	}

	stack := awscdk.NewStack(scope, jsii.String(s.StackName), &awscdk.StackProps{
		Description: jsii.String("Buzz-compatible NIP-29 relay, community " + s.Community),
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

	// --- network ---------------------------------------------------------
	var nat awsec2.NatProvider
	if s.Egress == "nat-instance" {
		nat = awsec2.NatProvider_InstanceV2(&awsec2.NatInstanceProps{
			InstanceType: awsec2.InstanceType_Of(awsec2.InstanceClass_T4G, awsec2.InstanceSize_NANO),
			MachineImage: awsec2.MachineImage_LatestAmazonLinux2023(&awsec2.AmazonLinux2023ImageSsmParameterProps{
				CpuType: awsec2.AmazonLinuxCpuType_ARM_64,
			}),
		})
	} else {
		nat = awsec2.NatProvider_Gateway(nil)
	}
	vpc := awsec2.NewVpc(stack, jsii.String("Vpc"), &awsec2.VpcProps{
		MaxAzs:             jsii.Number(2),
		NatGateways:        jsii.Number(1),
		NatGatewayProvider: nat,
		SubnetConfiguration: &[]*awsec2.SubnetConfiguration{
			{Name: jsii.String("public"), SubnetType: awsec2.SubnetType_PUBLIC, CidrMask: jsii.Number(24)},
			{Name: jsii.String("app"), SubnetType: awsec2.SubnetType_PRIVATE_WITH_EGRESS, CidrMask: jsii.Number(22)},
			{Name: jsii.String("db"), SubnetType: awsec2.SubnetType_PRIVATE_ISOLATED, CidrMask: jsii.Number(24)},
		},
	})
	appSubnets := &awsec2.SubnetSelection{SubnetType: awsec2.SubnetType_PRIVATE_WITH_EGRESS}

	fnSG := awsec2.NewSecurityGroup(stack, jsii.String("FunctionsSg"), &awsec2.SecurityGroupProps{
		Vpc:              vpc,
		Description:      jsii.String("buzz relay functions"),
		AllowAllOutbound: jsii.Bool(false),
	})
	dbSG := awsec2.NewSecurityGroup(stack, jsii.String("DbSg"), &awsec2.SecurityGroupProps{
		Vpc:              vpc,
		Description:      jsii.String("buzz relay Aurora: Postgres from the functions only"),
		AllowAllOutbound: jsii.Bool(false),
	})
	dbSG.AddIngressRule(fnSG, awsec2.Port_Tcp(jsii.Number(5432)), jsii.String("functions to Postgres"), nil)
	fnSG.AddEgressRule(dbSG, awsec2.Port_Tcp(jsii.Number(5432)), jsii.String("Postgres"), nil)
	// HTTPS to AWS APIs through the NAT (execute-api @connections, KMS, SSM,
	// Secrets Manager) or the KMS interface endpoint.
	fnSG.AddEgressRule(awsec2.Peer_AnyIpv4(), awsec2.Port_Tcp(jsii.Number(443)), jsii.String("HTTPS to AWS APIs"), nil)

	if s.KMSEndpoint {
		epSG := awsec2.NewSecurityGroup(stack, jsii.String("KmsEndpointSg"), &awsec2.SecurityGroupProps{
			Vpc: vpc, Description: jsii.String("KMS interface endpoint"), AllowAllOutbound: jsii.Bool(false),
		})
		epSG.AddIngressRule(fnSG, awsec2.Port_Tcp(jsii.Number(443)), jsii.String("functions to KMS"), nil)
		awsec2.NewInterfaceVpcEndpoint(stack, jsii.String("KmsEndpoint"), &awsec2.InterfaceVpcEndpointProps{
			Vpc:               vpc,
			Service:           awsec2.InterfaceVpcEndpointAwsService_KMS(),
			Subnets:           appSubnets,
			PrivateDnsEnabled: jsii.Bool(true),
			SecurityGroups:    &[]awsec2.ISecurityGroup{epSG},
			Open:              jsii.Bool(false),
		})
	}

	// --- database --------------------------------------------------------
	cluster := awsrds.NewDatabaseCluster(stack, jsii.String("Db"), &awsrds.DatabaseClusterProps{
		Engine: awsrds.DatabaseClusterEngine_AuroraPostgres(&awsrds.AuroraPostgresClusterEngineProps{
			Version: awsrds.AuroraPostgresEngineVersion_VER_16_11(),
		}),
		Writer: awsrds.ClusterInstance_ServerlessV2(jsii.String("writer"), &awsrds.ServerlessV2ClusterInstanceProps{
			PubliclyAccessible:      jsii.Bool(false),
			AutoMinorVersionUpgrade: jsii.Bool(true),
		}),
		ServerlessV2MinCapacity: minACU.ValueAsNumber(),
		ServerlessV2MaxCapacity: maxACU.ValueAsNumber(),
		Vpc:                     vpc,
		VpcSubnets:              &awsec2.SubnetSelection{SubnetType: awsec2.SubnetType_PRIVATE_ISOLATED},
		SecurityGroups:          &[]awsec2.ISecurityGroup{dbSG},
		Credentials:             awsrds.Credentials_FromGeneratedSecret(jsii.String("buzz"), nil),
		DefaultDatabaseName:     jsii.String("buzz"),
		StorageEncrypted:        jsii.Bool(true),
		DeletionProtection:      jsii.Bool(s.DeletionProtection),
		RemovalPolicy:           awscdk.RemovalPolicy_SNAPSHOT,
		Backup:                  &awsrds.BackupProps{Retention: awscdk.Duration_Days(jsii.Number(7))},
	})
	dbSecret := cluster.Secret()

	// --- relay key -------------------------------------------------------
	// The KEK is kept when the stack goes: without it the relay identity
	// (the ciphertext in SSM) is lost for good.
	kek := awskms.NewKey(stack, jsii.String("RelayKeyKek"), &awskms.KeyProps{
		Description:       jsii.String("encrypts the buzz relay secp256k1 key, community " + s.Community),
		Alias:             jsii.String("alias/buzz-" + s.Slug() + "-relay"),
		EnableKeyRotation: jsii.Bool(true),
		RemovalPolicy:     awscdk.RemovalPolicy_RETAIN,
		PendingWindow:     awscdk.Duration_Days(jsii.Number(30)),
	})
	keyParamArn := stack.FormatArn(&awscdk.ArnComponents{
		Service:  jsii.String("ssm"),
		Resource: jsii.String("parameter"),
		// RelayKeyParameter starts with '/', which the ARN keeps once.
		ResourceName: jsii.String(s.RelayKeyParameter()[1:]),
	})

	// --- functions -------------------------------------------------------
	httpApi := awsapigatewayv2.NewHttpApi(stack, jsii.String("HttpApi"), &awsapigatewayv2.HttpApiProps{
		Description: jsii.String("buzz relay HTTP bridge, community " + s.Community),
		CorsPreflight: &awsapigatewayv2.CorsPreflightOptions{
			AllowOrigins: jsii.Strings("*"),
			AllowMethods: &[]awsapigatewayv2.CorsHttpMethod{awsapigatewayv2.CorsHttpMethod_GET, awsapigatewayv2.CorsHttpMethod_POST, awsapigatewayv2.CorsHttpMethod_OPTIONS},
			AllowHeaders: jsii.Strings("Authorization", "Content-Type", "Accept"),
			MaxAge:       awscdk.Duration_Hours(jsii.Number(1)),
		},
	})
	wsApi := awsapigatewayv2.NewWebSocketApi(stack, jsii.String("WsApi"), &awsapigatewayv2.WebSocketApiProps{
		Description: jsii.String("buzz relay WebSocket (NIP-01/42), community " + s.Community),
		// Nostr messages are JSON arrays: route selection never matches, so
		// everything goes to $default (see design §2).
		RouteSelectionExpression: jsii.String("$request.body.action"),
	})
	wsStage := awsapigatewayv2.NewWebSocketStage(stack, jsii.String("WsStage"), &awsapigatewayv2.WebSocketStageProps{
		WebSocketApi: wsApi,
		StageName:    jsii.String(WebSocketStageName),
		AutoDeploy:   jsii.Bool(true),
	})

	alarms := awssns.NewTopic(stack, jsii.String("Alarms"), &awssns.TopicProps{
		DisplayName: jsii.String("buzz relay " + s.Community + " alarms"),
	})
	if s.AlarmEmail != "" {
		alarms.AddSubscription(awssnssubscriptions.NewEmailSubscription(jsii.String(s.AlarmEmail), nil))
	}
	alarmAction := awscloudwatchactions.NewSnsAction(alarms)

	fns := map[string]awslambda.Function{}
	for _, f := range Functions {
		env := map[string]*string{
			"BUZZ_COMMUNITY":     jsii.String(s.Community),
			"BUZZ_PUBLIC_SCHEME": jsii.String("https"),
			"DB_SECRET_ARN":      dbSecret.SecretArn(),
			"DB_MAX_CONNS":       jsii.String("2"),
			"LOG_LEVEL":          jsii.String(s.LogLevel),
		}
		if f.Signs {
			env["RELAY_SIGNER"] = jsii.String("kms")
			env["RELAY_KMS_KEY_ID"] = kek.KeyArn()
			env["RELAY_KEY_REVISION"] = jsii.String(s.RelayKeyRevision)
			if s.RelayKeyCiphertext != "" {
				env["RELAY_KEY_CIPHERTEXT"] = jsii.String(s.RelayKeyCiphertext)
			} else {
				env["RELAY_KEY_SSM_PARAMETER"] = jsii.String(s.RelayKeyParameter())
			}
		}
		if f.Posts {
			env["WS_MANAGEMENT_ENDPOINT"] = wsStage.CallbackUrl()
		}
		logs := awslogs.NewLogGroup(stack, jsii.String(f.Name+"-logs"), &awslogs.LogGroupProps{
			Retention:     s.LogRetention,
			RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
		})
		fn := awslambda.NewFunction(stack, jsii.String(f.Name), &awslambda.FunctionProps{
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
		})
		dbSecret.GrantRead(fn, nil)
		if f.Signs {
			fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Sid:       jsii.String("DecryptRelayKey"),
				Actions:   jsii.Strings("kms:Decrypt"),
				Resources: jsii.Strings(*kek.KeyArn()),
				Conditions: &map[string]interface{}{
					"StringEquals": map[string]interface{}{"kms:EncryptionContext:community": s.Community},
				},
			}))
			if s.RelayKeyCiphertext == "" {
				fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
					Sid:       jsii.String("ReadRelayKeyParameter"),
					Actions:   jsii.Strings("ssm:GetParameter"),
					Resources: jsii.Strings(*keyParamArn),
				}))
			}
		}
		if f.Posts {
			wsStage.GrantManagementApiAccess(fn)
		}
		period := awscdk.Duration_Minutes(jsii.Number(5))
		for name, m := range map[string]awscloudwatch.Metric{
			"errors":    fn.MetricErrors(&awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("Sum")}),
			"throttles": fn.MetricThrottles(&awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("Sum")}),
		} {
			a := m.CreateAlarm(stack, jsii.String(f.Name+"-"+name), &awscloudwatch.CreateAlarmOptions{
				AlarmDescription:   jsii.String(fmt.Sprintf("buzz relay %s: %s in 5 minutes", f.Name, name)),
				Threshold:          jsii.Number(1),
				EvaluationPeriods:  jsii.Number(1),
				ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
				TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
			})
			a.AddAlarmAction(alarmAction)
		}
		fns[f.Name] = fn
	}

	// --- routes ----------------------------------------------------------
	httpRoute := func(fn, method, path string) {
		m := map[string]awsapigatewayv2.HttpMethod{"GET": awsapigatewayv2.HttpMethod_GET, "POST": awsapigatewayv2.HttpMethod_POST}[method]
		httpApi.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
			Path:        jsii.String(path),
			Methods:     &[]awsapigatewayv2.HttpMethod{m},
			Integration: awsapigatewayv2integrations.NewHttpLambdaIntegration(jsii.String(fn+"-"+method+path), fns[fn], nil),
		})
	}
	httpRoute("ingest", "POST", "/events")
	httpRoute("query", "POST", "/query")
	httpRoute("query", "POST", "/count")
	httpRoute("query", "GET", "/")
	httpRoute("query", "GET", "/healthz")

	wsApi.AddRoute(jsii.String("$connect"), &awsapigatewayv2.WebSocketRouteOptions{
		Integration: awsapigatewayv2integrations.NewWebSocketLambdaIntegration(jsii.String("ws-connect"), fns["ws-connect"], nil),
	})
	wsApi.AddRoute(jsii.String("$default"), &awsapigatewayv2.WebSocketRouteOptions{
		Integration: awsapigatewayv2integrations.NewWebSocketLambdaIntegration(jsii.String("ws-message"), fns["ws-message"], nil),
	})
	wsApi.AddRoute(jsii.String("$disconnect"), &awsapigatewayv2.WebSocketRouteOptions{
		Integration: awsapigatewayv2integrations.NewWebSocketLambdaIntegration(jsii.String("ws-disconnect"), fns["ws-disconnect"], nil),
	})

	// --- migrations ------------------------------------------------------
	// The migrate function (same migrator as make dev; idempotent) runs
	// after the database exists and before any handler is created or
	// updated, on the first deploy and whenever its code (which embeds the
	// migrations) changes.
	handlers := []constructs.Construct{}
	for _, f := range Functions {
		if f.Name != "migrate" {
			handlers = append(handlers, fns[f.Name])
		}
	}
	triggers.NewTrigger(stack, jsii.String("Migrate"), &triggers.TriggerProps{
		Handler:                fns["migrate"],
		ExecuteAfter:           &[]constructs.Construct{cluster},
		ExecuteBefore:          &handlers,
		ExecuteOnHandlerChange: jsii.Bool(true),
		InvocationType:         triggers.InvocationType_REQUEST_RESPONSE,
		Timeout:                awscdk.Duration_Minutes(jsii.Number(5)),
	})

	// HTTP API server errors are worth an alarm too.
	httpApi.MetricServerError(&awscloudwatch.MetricOptions{Period: awscdk.Duration_Minutes(jsii.Number(5)), Statistic: jsii.String("Sum")}).
		CreateAlarm(stack, jsii.String("http-5xx"), &awscloudwatch.CreateAlarmOptions{
			AlarmDescription:   jsii.String("buzz relay HTTP API 5xx in 5 minutes"),
			Threshold:          jsii.Number(5),
			EvaluationPeriods:  jsii.Number(1),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		}).AddAlarmAction(alarmAction)

	// --- outputs ---------------------------------------------------------
	out := func(id string, v *string, desc string) {
		awscdk.NewCfnOutput(stack, jsii.String(id), &awscdk.CfnOutputProps{Value: v, Description: jsii.String(desc)})
	}
	out("HttpUrl", httpApi.ApiEndpoint(), "HTTP bridge: POST /events, /query, /count; GET / (NIP-11)")
	out("WebSocketUrl", wsStage.Url(), "relay WebSocket URL for nostr clients")
	out("RelayKeyKmsKeyArn", kek.KeyArn(), "KMS key that encrypts the relay key")
	out("RelayKeyParameter", jsii.String(s.RelayKeyParameter()), "SSM parameter the functions read the relay key ciphertext from")
	out("RelayKeyCommand", jsii.String("go run ./localdev/relaykey -kms-key alias/buzz-"+s.Slug()+"-relay -community "+s.Community+" -ssm-parameter "+s.RelayKeyParameter()),
		"create the relay key (once per community)")
	out("DbSecretArn", dbSecret.SecretArn(), "Aurora credentials")
	out("AlarmTopicArn", alarms.TopicArn(), "SNS topic of the alarms")
	return stack, nil
}
