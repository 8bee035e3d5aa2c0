//! The schema's history, in both dialects. A database records how many of
//! these it has applied; [`crate::sql::pending`] says what it still needs.
//! Never edit an applied migration: add one.

use crate::sql::Migration;

pub(crate) const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        sqlite: r#"
CREATE TABLE IF NOT EXISTS agents (
    tenant TEXT NOT NULL,
    id TEXT NOT NULL,
    body TEXT NOT NULL,
    first_seen TEXT NOT NULL,
    last_seen TEXT NOT NULL,
    PRIMARY KEY (tenant, id)
);
CREATE TABLE IF NOT EXISTS trajectories (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    session_id TEXT,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    event_count INTEGER NOT NULL,
    state TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS trajectories_by_created ON trajectories (created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS trajectories_by_agent ON trajectories (agent_id, created_at DESC);
CREATE INDEX IF NOT EXISTS trajectories_by_session ON trajectories (session_id);
CREATE INDEX IF NOT EXISTS trajectories_by_tenant ON trajectories (tenant, created_at DESC);
CREATE TABLE IF NOT EXISTS events (
    trajectory_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    event_id TEXT NOT NULL UNIQUE,
    tenant TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (trajectory_id, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS events_by_time ON events (recorded_at);
CREATE TABLE IF NOT EXISTS adjudications (
    event_id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    trajectory_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    decision TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS adjudications_by_decision ON adjudications (decision, recorded_at DESC, event_id DESC);
CREATE INDEX IF NOT EXISTS adjudications_by_time ON adjudications (recorded_at);
CREATE TABLE IF NOT EXISTS adjudication_policies (
    event_id TEXT NOT NULL,
    tenant TEXT NOT NULL,
    policy_id TEXT NOT NULL,
    recorded_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS adjudication_policies_by_time ON adjudication_policies (recorded_at);
CREATE TABLE IF NOT EXISTS grants (
    tenant TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    shape TEXT NOT NULL,
    granted_at TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (tenant, agent_id, shape)
);
"#,
        postgres: r#"
CREATE TABLE agents (
    tenant TEXT NOT NULL,
    id TEXT NOT NULL,
    body TEXT NOT NULL,
    first_seen TIMESTAMPTZ NOT NULL,
    last_seen TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant, id)
);
CREATE TABLE trajectories (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    session_id TEXT,
    status TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    event_count BIGINT NOT NULL,
    state TEXT NOT NULL
);
CREATE INDEX trajectories_by_tenant ON trajectories (tenant, created_at DESC, id DESC);
CREATE INDEX trajectories_by_agent ON trajectories (agent_id, created_at DESC);
CREATE INDEX trajectories_by_session ON trajectories (session_id);
CREATE TABLE events (
    trajectory_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    event_id TEXT NOT NULL CONSTRAINT events_event_id_unique UNIQUE,
    tenant TEXT NOT NULL,
    recorded_at TIMESTAMPTZ NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (trajectory_id, seq)
);
CREATE INDEX events_by_time ON events (recorded_at);
CREATE TABLE adjudications (
    event_id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    trajectory_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    kind TEXT NOT NULL,
    decision TEXT NOT NULL,
    recorded_at TIMESTAMPTZ NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX adjudications_by_decision ON adjudications (tenant, decision, recorded_at DESC, event_id DESC);
CREATE INDEX adjudications_by_time ON adjudications (recorded_at);
CREATE TABLE adjudication_policies (
    event_id TEXT NOT NULL,
    tenant TEXT NOT NULL,
    policy_id TEXT NOT NULL,
    recorded_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX adjudication_policies_by_time ON adjudication_policies (recorded_at);
"#,
    },
    Migration {
        version: 2,
        sqlite: r#"
CREATE TABLE IF NOT EXISTS grants (
    tenant TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    shape TEXT NOT NULL,
    granted_at TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (tenant, agent_id, shape)
);
"#,
        postgres: r#"
CREATE TABLE grants (
    tenant TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    shape TEXT NOT NULL,
    granted_at TIMESTAMPTZ NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (tenant, agent_id, shape)
);
"#,
    },
    // Ids unique per tenant: the tenant leads every key.
    Migration {
        version: 3,
        sqlite: r#"
CREATE TABLE trajectories_v3 (
    tenant TEXT NOT NULL,
    id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    session_id TEXT,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    event_count INTEGER NOT NULL,
    state TEXT NOT NULL,
    PRIMARY KEY (tenant, id)
);
INSERT INTO trajectories_v3
    SELECT tenant, id, agent_id, session_id, status, created_at, updated_at, event_count, state FROM trajectories;
DROP TABLE trajectories;
ALTER TABLE trajectories_v3 RENAME TO trajectories;
CREATE INDEX trajectories_by_tenant ON trajectories (tenant, created_at DESC, id DESC);
CREATE INDEX trajectories_by_agent ON trajectories (tenant, agent_id, created_at DESC);
CREATE INDEX trajectories_by_session ON trajectories (tenant, session_id);
CREATE TABLE events_v3 (
    tenant TEXT NOT NULL,
    trajectory_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    event_id TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (tenant, trajectory_id, seq),
    CONSTRAINT events_event_id_unique UNIQUE (tenant, event_id)
) WITHOUT ROWID;
INSERT INTO events_v3 SELECT tenant, trajectory_id, seq, event_id, recorded_at, body FROM events;
DROP TABLE events;
ALTER TABLE events_v3 RENAME TO events;
CREATE INDEX events_by_time ON events (recorded_at);
CREATE TABLE adjudications_v3 (
    tenant TEXT NOT NULL,
    event_id TEXT NOT NULL,
    trajectory_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    decision TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (tenant, event_id)
);
INSERT INTO adjudications_v3
    SELECT tenant, event_id, trajectory_id, agent_id, seq, kind, decision, recorded_at, body FROM adjudications;
DROP TABLE adjudications;
ALTER TABLE adjudications_v3 RENAME TO adjudications;
CREATE INDEX adjudications_by_decision ON adjudications (tenant, decision, recorded_at DESC, event_id DESC);
CREATE INDEX adjudications_by_time ON adjudications (recorded_at);
"#,
        postgres: r#"
ALTER TABLE trajectories DROP CONSTRAINT trajectories_pkey;
ALTER TABLE trajectories ADD PRIMARY KEY (tenant, id);
DROP INDEX trajectories_by_agent;
DROP INDEX trajectories_by_session;
CREATE INDEX trajectories_by_agent ON trajectories (tenant, agent_id, created_at DESC);
CREATE INDEX trajectories_by_session ON trajectories (tenant, session_id);
ALTER TABLE events DROP CONSTRAINT events_pkey;
ALTER TABLE events ADD PRIMARY KEY (tenant, trajectory_id, seq);
ALTER TABLE events DROP CONSTRAINT events_event_id_unique;
ALTER TABLE events ADD CONSTRAINT events_event_id_unique UNIQUE (tenant, event_id);
ALTER TABLE adjudications DROP CONSTRAINT adjudications_pkey;
ALTER TABLE adjudications ADD PRIMARY KEY (tenant, event_id);
"#,
    },
    // Escalated steps waiting for an operator.
    Migration {
        version: 4,
        sqlite: r#"
CREATE TABLE approvals (
    tenant TEXT NOT NULL,
    id TEXT NOT NULL,
    event_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    trajectory_id TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (tenant, id),
    CONSTRAINT approvals_event_unique UNIQUE (tenant, event_id)
);
CREATE INDEX approvals_by_created ON approvals (tenant, created_at DESC, id DESC);
CREATE INDEX approvals_by_deadline ON approvals (status, expires_at);
"#,
        postgres: r#"
CREATE TABLE approvals (
    tenant TEXT NOT NULL,
    id TEXT NOT NULL,
    event_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    trajectory_id TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (tenant, id),
    CONSTRAINT approvals_event_unique UNIQUE (tenant, event_id)
);
CREATE INDEX approvals_by_created ON approvals (tenant, created_at DESC, id DESC);
CREATE INDEX approvals_by_deadline ON approvals (status, expires_at);
"#,
    },
    // Shadow-mode (monitor) policies' matches, counted apart from the
    // policies that decided.
    Migration {
        version: 5,
        sqlite: "ALTER TABLE adjudication_policies ADD COLUMN shadow INTEGER NOT NULL DEFAULT 0;",
        postgres: "ALTER TABLE adjudication_policies ADD COLUMN shadow INTEGER NOT NULL DEFAULT 0;",
    },
    // SQLite: events in a rowid table, so bodies are appended densely in
    // arrival order; keyed by position they were a clustered index split
    // across every active trajectory, at a third of each page used. The
    // position and the id stay unique, as indexes. (PostgreSQL already
    // appends rows to a heap.) Denials and escalations, the only ones listed
    // by decision, get an index of their own that allowed steps never
    // write; the old one took every step, at the wrong end for appending.
    Migration {
        version: 6,
        sqlite: r#"
CREATE TABLE events_v6 (
    tenant TEXT NOT NULL,
    trajectory_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    event_id TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    body TEXT NOT NULL,
    CONSTRAINT events_position_unique UNIQUE (tenant, trajectory_id, seq),
    CONSTRAINT events_event_id_unique UNIQUE (tenant, event_id)
);
INSERT INTO events_v6 (tenant, trajectory_id, seq, event_id, recorded_at, body)
    SELECT tenant, trajectory_id, seq, event_id, recorded_at, body FROM events
    ORDER BY recorded_at, tenant, trajectory_id, seq;
DROP TABLE events;
ALTER TABLE events_v6 RENAME TO events;
CREATE INDEX events_by_time ON events (recorded_at);
DROP INDEX adjudications_by_decision;
CREATE INDEX adjudications_blocked ON adjudications (recorded_at, event_id)
    WHERE decision IN ('deny', 'escalate');
"#,
        postgres: "",
    },
    // PostgreSQL announces every recorded event and every approval opened
    // or settled, at commit, to the servers sharing the database (see
    // `postgres_feed`). The notification names the row; readers read it.
    Migration {
        version: 7,
        sqlite: "",
        postgres: r#"
CREATE FUNCTION sondera_notify_recorded() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('sondera_recorded', json_build_array(NEW.tenant, NEW.trajectory_id, NEW.seq)::text);
    RETURN NULL;
END $$;
CREATE TRIGGER events_announced AFTER INSERT ON events
    FOR EACH ROW EXECUTE FUNCTION sondera_notify_recorded();
CREATE FUNCTION sondera_notify_approval() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('sondera_approvals', json_build_array(NEW.tenant, NEW.id)::text);
    RETURN NULL;
END $$;
CREATE TRIGGER approvals_announced AFTER INSERT OR UPDATE ON approvals
    FOR EACH ROW EXECUTE FUNCTION sondera_notify_approval();
"#,
    },
    // Policy sets pushed to the servers, by revision, and the one in force;
    // PostgreSQL announces a change of the one in force.
    Migration {
        version: 8,
        sqlite: r#"
CREATE TABLE policy_revisions (
    revision TEXT PRIMARY KEY,
    pushed_at TEXT NOT NULL,
    body TEXT NOT NULL,
    sources TEXT NOT NULL
);
CREATE INDEX policy_revisions_by_time ON policy_revisions (pushed_at DESC, revision DESC);
CREATE TABLE policy_current (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    revision TEXT NOT NULL REFERENCES policy_revisions (revision),
    body TEXT NOT NULL
);
"#,
        postgres: r#"
CREATE TABLE policy_revisions (
    revision TEXT PRIMARY KEY,
    pushed_at TIMESTAMPTZ NOT NULL,
    body TEXT NOT NULL,
    sources TEXT NOT NULL
);
CREATE INDEX policy_revisions_by_time ON policy_revisions (pushed_at DESC, revision DESC);
CREATE TABLE policy_current (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    revision TEXT NOT NULL REFERENCES policy_revisions (revision),
    body TEXT NOT NULL
);
CREATE FUNCTION sondera_notify_policies() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('sondera_policies', NEW.revision);
    RETURN NULL;
END $$;
CREATE TRIGGER policies_announced AFTER INSERT OR UPDATE ON policy_current
    FOR EACH ROW EXECUTE FUNCTION sondera_notify_policies();
"#,
    },
    // Bearer tokens kept for every server (by hash); PostgreSQL announces
    // each one stored or revoked.
    Migration {
        version: 9,
        sqlite: "CREATE TABLE tokens (hash TEXT PRIMARY KEY, body TEXT NOT NULL);",
        postgres: r#"
CREATE TABLE tokens (hash TEXT PRIMARY KEY, body TEXT NOT NULL);
CREATE FUNCTION sondera_notify_tokens() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('sondera_tokens', TG_OP);
    RETURN NULL;
END $$;
CREATE TRIGGER tokens_announced AFTER INSERT OR DELETE ON tokens
    FOR EACH ROW EXECUTE FUNCTION sondera_notify_tokens();
"#,
    },
    // Retention: ended trajectories by last change, and what is removed
    // with one found from its events and its trajectory.
    Migration {
        version: 10,
        sqlite: RETENTION_INDEXES,
        postgres: RETENTION_INDEXES,
    },
];

const RETENTION_INDEXES: &str = r#"
CREATE INDEX trajectories_ended ON trajectories (tenant, updated_at)
    WHERE status IN ('completed', 'failed', 'terminated');
CREATE INDEX adjudication_policies_by_event ON adjudication_policies (tenant, event_id);
CREATE INDEX approvals_by_trajectory ON approvals (tenant, trajectory_id);
"#;

/// SQLite databases from before version numbers (no tenants): everything
/// becomes the default tenant's, and agents are keyed by tenant and id. Such
/// a database is then at version 1.
pub(crate) const SQLITE_BEFORE_VERSIONS: &str = r#"
ALTER TABLE trajectories ADD COLUMN tenant TEXT NOT NULL DEFAULT 'default';
ALTER TABLE events ADD COLUMN tenant TEXT NOT NULL DEFAULT 'default';
ALTER TABLE adjudications ADD COLUMN tenant TEXT NOT NULL DEFAULT 'default';
ALTER TABLE adjudication_policies ADD COLUMN tenant TEXT NOT NULL DEFAULT 'default';
CREATE TABLE agents_by_tenant (
    tenant TEXT NOT NULL,
    id TEXT NOT NULL,
    body TEXT NOT NULL,
    first_seen TEXT NOT NULL,
    last_seen TEXT NOT NULL,
    PRIMARY KEY (tenant, id)
);
INSERT INTO agents_by_tenant SELECT 'default', id, body, first_seen, last_seen FROM agents;
DROP TABLE agents;
ALTER TABLE agents_by_tenant RENAME TO agents;
"#;
