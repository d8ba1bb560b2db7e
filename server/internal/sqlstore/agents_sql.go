package sqlstore

import (
	"math"

	"github.com/docsapi/docsapi-go/server/store"
)

// AgentsQuerySQL reads a project's agent totals and one page of per-path
// rows in one statement, so both come from one snapshot: rows of kind 0
// are the totals (path NULL), of kind 1 the page, each in QueryAgents'
// order. Its parameters are AgentsArgs'; it is the same for every SQL
// backend but for how parameters are written ($n here).
const AgentsQuerySQL = `WITH f AS (
	     SELECT path, agent, class, views FROM agent_days
	     WHERE project_id = $1 AND day >= $2 AND day < $3
	       AND ($4 = '' OR path = $4) AND ($5 = '' OR class = $5)),
	 t AS (
	     SELECT agent, class, CAST(sum(views) AS bigint) AS v FROM f
	     GROUP BY agent, class HAVING sum(views) > 0),
	 r AS (
	     SELECT path, agent, class, CAST(sum(views) AS bigint) AS v FROM f
	     GROUP BY path, agent, class HAVING sum(views) > 0
	     ORDER BY v DESC, path, class, agent LIMIT $6 OFFSET $7)
	 SELECT 0 AS kind, NULL AS path, agent, class, v FROM t
	 UNION ALL
	 SELECT 1 AS kind, path, agent, class, v FROM r
	 ORDER BY kind, v DESC, path, class, agent`

// AgentSeriesSQL reads a project's views per agent and day, in
// AgentSeries' order; its parameters are the first five of AgentsArgs'.
const AgentSeriesSQL = `SELECT day, agent, class, CAST(sum(views) AS bigint) AS v FROM agent_days
	 WHERE project_id = $1 AND day >= $2 AND day < $3
	   AND ($4 = '' OR path = $4) AND ($5 = '' OR class = $5)
	 GROUP BY day, agent, class HAVING sum(views) > 0
	 ORDER BY day, class, agent`

// AgentsArgs returns the parameters of AgentsQuerySQL for q: the project,
// the range of days as Unix times (open sides as the extremes), the path
// and class ("" for all), the limit and the offset.
func AgentsArgs(q store.AgentsQuery) []any {
	from, to := int64(math.MinInt64), int64(math.MaxInt64)
	if !q.From.IsZero() {
		from = q.From.Unix()
	}
	if !q.To.IsZero() {
		to = q.To.Unix()
	}
	return []any{q.ProjectID, from, to, q.Path, string(q.Class), int64(q.Limit), int64(q.Offset)}
}
