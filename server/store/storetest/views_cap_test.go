package storetest_test

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/docsapi/docsapi-go/server/internal/thorough"
	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/store/storetest"
)

// cappedStore is the reference store with the cap on distinct paths per
// project and day, the straightforward way: a set of paths per day.
type cappedStore struct {
	*memStore
	max   int
	days  map[dayKey]map[string]bool
	folds store.ViewFolds
}

type dayKey struct {
	project string
	day     int64
}

func (c *cappedStore) AddViews(ctx context.Context, counts []store.ViewCount) error {
	for _, v := range counts {
		if err := c.validView(v); err != nil {
			return err
		}
	}
	out := make([]store.ViewCount, 0, len(counts))
	// New paths of the batch, per day, in byte order: admitted while the
	// day has room.
	fresh := map[dayKey]map[string]bool{}
	for _, v := range counts {
		if v.Human == 0 && v.AI == 0 && v.Bot == 0 || v.Path == store.OtherPagesPath {
			continue
		}
		k := dayKey{v.ProjectID, v.Hour.Unix() - v.Hour.Unix()%86400}
		if !c.days[k][v.Path] {
			if fresh[k] == nil {
				fresh[k] = map[string]bool{}
			}
			fresh[k][v.Path] = true
		}
	}
	folded := map[dayKey]map[string]bool{}
	for k, paths := range fresh {
		var sorted []string
		for p := range paths {
			sorted = append(sorted, p)
		}
		slices.Sort(sorted)
		if c.days[k] == nil {
			c.days[k] = map[string]bool{}
		}
		for _, p := range sorted {
			if len(c.days[k]) < c.max {
				c.days[k][p] = true
			} else {
				if folded[k] == nil {
					folded[k] = map[string]bool{}
				}
				folded[k][p] = true
			}
		}
	}
	for _, v := range counts {
		k := dayKey{v.ProjectID, v.Hour.Unix() - v.Hour.Unix()%86400}
		if folded[k][v.Path] {
			v.Path = store.OtherPagesPath
			c.folds.Counts++
			c.folds.Views += v.Human + v.AI + v.Bot
		}
		out = append(out, v)
	}
	return c.memStore.AddViews(ctx, out)
}

func (c *cappedStore) ViewFolds() store.ViewFolds { return c.folds }

// uncappedEnv makes TestReferenceDailyPathCap run the reference store
// without its cap, in the child process of TestDailyPathCapFailsWithoutACap.
const uncappedEnv = "STORETEST_UNCAPPED"

// TestReferenceDailyPathCap runs the cap's tests against the reference
// store: a straightforward cap passes them.
func TestReferenceDailyPathCap(t *testing.T) {
	storetest.RunDailyPathCap(t, func(t *testing.T, max int) store.Store {
		if os.Getenv(uncappedEnv) != "" {
			return newMemStore("")
		}
		return &cappedStore{memStore: newMemStore(""), max: max, days: map[dayKey]map[string]bool{}}
	})
}

// TestDailyPathCapFailsWithoutACap checks that a store without the cap, the
// stores before it, fails the cap's tests.
func TestDailyPathCapFailsWithoutACap(t *testing.T) {
	if os.Getenv(uncappedEnv) != "" {
		t.Skip("inside the uncapped run")
	}
	thorough.Require(t, "runs the cap's tests again with the cap planted out")
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestReferenceDailyPathCap$", "-test.v")
	cmd.Env = append(os.Environ(), uncappedEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the cap's tests passed without a cap:\n%s", out)
	}
	for _, name := range []string{"NewPathsPastTheCapFoldIntoOtherPages", "EachDayAndProjectStartsFresh", "TotalsEqualTheViewsSent", "AgentViewsFoldWithTheirPath"} {
		if !strings.Contains(string(out), "--- FAIL: TestReferenceDailyPathCap/"+name) {
			t.Errorf("without a cap, %s passed", name)
		}
	}
}
