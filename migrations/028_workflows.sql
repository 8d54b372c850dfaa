-- Buzz's channel workflows (issue 53, docs/workflows.md): definitions
-- (kind 30620), their runs with one row per step, and approvals. Nothing
-- runs between requests: a run advances when a function is invoked for it
-- (a commit, a webhook, a schedule, a wake), and a wait is a row with its
-- wake time.
--
-- workflows: the effective definition of each stored 30620, written by the
-- transaction that stores the event (shared/service/workflow, called by
-- ingest): one row per workflow id (the d tag, a UUID) in a community.
-- definition is the canonical JSON (never the secret); a webhook workflow
-- keeps only the SHA-256 of its secret, which its owner got once, in the
-- OK. deleted_at is set by a kind 5 naming its address.
CREATE TABLE workflows (
    community_id   text    NOT NULL REFERENCES communities (id),
    id             text    COLLATE "C" NOT NULL,
    channel_id     text    COLLATE "C" NOT NULL,
    owner          text    COLLATE "C" NOT NULL,
    name           text    NOT NULL,
    event_id       text    COLLATE "C" NOT NULL,
    definition     jsonb   NOT NULL,
    trigger_on     text    NOT NULL,
    enabled        boolean NOT NULL,
    elevated       boolean NOT NULL,
    secret_hash    bytea,
    schedule       text,
    created_at     bigint  NOT NULL,
    updated_at     bigint  NOT NULL,
    deleted_at     bigint,
    PRIMARY KEY (community_id, id)
);
-- The message triggers of a channel, read after a commit in it.
CREATE INDEX workflows_channel ON workflows (community_id, channel_id)
    WHERE deleted_at IS NULL AND enabled;

-- workflow_runs: one row per run. trigger_key makes a trigger start one run
-- however often it is delivered (the triggering event's id, the 46020's id,
-- a webhook call's id, a schedule's fire time). definition is the one the
-- run started with. status: pending, running, waiting (a delay),
-- waiting_approval, completed, failed, cancelled; wake_at is when a waiting
-- run is due.
CREATE TABLE workflow_runs (
    community_id    text    NOT NULL,
    id              uuid    NOT NULL,
    workflow_id     text    COLLATE "C" NOT NULL,
    trigger_key     text    COLLATE "C" NOT NULL,
    trigger_kind    text    NOT NULL,
    trigger_ctx     jsonb   NOT NULL,
    definition      jsonb   NOT NULL,
    status          text    NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'waiting', 'waiting_approval', 'completed', 'failed', 'cancelled')),
    current_step    integer NOT NULL DEFAULT 0,
    error_code      text,
    error_message   text,
    wake_at         bigint,
    created_at      bigint  NOT NULL,
    started_at      bigint,
    completed_at    bigint,
    PRIMARY KEY (community_id, id),
    UNIQUE (community_id, workflow_id, trigger_key)
);
CREATE INDEX workflow_runs_page ON workflow_runs (community_id, workflow_id, created_at DESC, id DESC);

-- workflow_steps: one row per step a run reached; the row is the step's
-- idempotency key. An effect inside the database (a message, a reaction,
-- an approval request) commits with its row, so it happens once; an
-- effect outside it (call_webhook) first commits its row as started, and
-- a run that finds a step started and never finished does not repeat it.
CREATE TABLE workflow_steps (
    community_id  text    NOT NULL,
    run_id        uuid    NOT NULL,
    step_index    integer NOT NULL,
    step_id       text    NOT NULL,
    status        text    NOT NULL CHECK (status IN ('started', 'completed', 'skipped', 'failed', 'waiting')),
    output        jsonb,
    error         text,
    effect_id     text,
    started_at    bigint  NOT NULL,
    completed_at  bigint,
    PRIMARY KEY (community_id, run_id, step_index)
);

-- workflow_approvals: an approval gate, keyed by the SHA-256 of its token
-- (the approval_ref a 46030/46031 names in its d tag).
CREATE TABLE workflow_approvals (
    community_id   text    NOT NULL,
    token_hash     bytea   NOT NULL,
    run_id         uuid    NOT NULL,
    workflow_id    text    COLLATE "C" NOT NULL,
    step_index     integer NOT NULL,
    step_id        text    NOT NULL,
    approver_spec  text    NOT NULL,
    message        text    NOT NULL,
    status         text    NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'granted', 'denied', 'expired')),
    approver       text,
    note           text,
    expires_at     bigint  NOT NULL,
    created_at     bigint  NOT NULL,
    decided_at     bigint,
    PRIMARY KEY (community_id, token_hash)
);
CREATE INDEX workflow_approvals_run ON workflow_approvals (community_id, run_id);
