package postgres

// QueryViewsSQL is the views query, for the test that checks its plan.
const QueryViewsSQL = queryViews
