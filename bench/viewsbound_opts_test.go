package bench

import (
	"github.com/docsapi/docsapi-go/server/postgres"
	"github.com/docsapi/docsapi-go/server/sqlite"
)

// boundLayout names the datasets' files and databases after the storage
// layout that built them, so that a layout never reads another's.
const boundLayout = "v6"

// boundCap is the stores' cap on distinct paths per project and day in the
// bound benchmarks: above day1m's million, so that nothing is folded.
const boundCap = 2_000_000

func boundSQLiteOptions() []sqlite.Option {
	return []sqlite.Option{sqlite.WithDailyPathCap(boundCap)}
}

func boundPostgresOptions() []postgres.Option {
	return []postgres.Option{postgres.WithDailyPathCap(boundCap)}
}
