package postgres

import (
	"github.com/docsapi/docsapi-go/server/internal/rollup"
	"github.com/docsapi/docsapi-go/server/internal/sqlstore"
	"github.com/docsapi/docsapi-go/server/store"
)

// QueryRollsSQL is the statement that reads rolls, for the test that checks
// its plan.
const QueryRollsSQL = queryRolls

// QueryRollsArgs returns QueryRollsSQL's arguments for span, for the same
// test.
func QueryRollsArgs(project string, span rollup.Span) []any { return queryRollsArgs(project, span) }

// SetQueryHook makes every QueryViews of s report its work to f, for the
// test that checks it stays bounded. Set it before s is used.
func SetQueryHook(s *Store, f func(rollup.Stats)) { sqlstore.SetQueryHook(s.viewMethods, f) }

// ConversationsQuery returns QueryConversations' statement and arguments
// for q, for the test that checks its plan.
func ConversationsQuery(q store.ConversationsQuery) (string, []any) { return conversationsQuery(q) }
