-- Page views per agent (see store.AgentStore): per project, UTC day and
-- path, the views of each AI agent and crawler by name, as the traffic
-- classifier names its rules. Names come from a rule table, never from a
-- user agent as sent, and rows are added only for the paths the day holds
-- views of (the cap on paths per day applies to them), so a day holds at
-- most the cap's paths times the table's names. No foreign key to
-- projects, as for the views.
CREATE TABLE agent_days (
    project_id TEXT    NOT NULL,
    day        INTEGER NOT NULL, -- Unix time of the UTC day's start
    path       TEXT    NOT NULL,
    agent      TEXT    NOT NULL,
    class      TEXT    NOT NULL CHECK (class IN ('ai', 'search-bot', 'training-bot', 'other-bot')),
    views      INTEGER NOT NULL CHECK (views >= 0),
    PRIMARY KEY (project_id, day, path, agent, class)
) STRICT, WITHOUT ROWID;

-- A page's agents over a range (?path= on the dashboard and the API).
CREATE INDEX agent_days_by_path ON agent_days (project_id, path, day);
