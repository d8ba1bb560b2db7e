package storetest_test

import (
	"bytes"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docsapi/docsapi-go/server/internal/thorough"
	"github.com/docsapi/docsapi-go/server/store"
	"github.com/docsapi/docsapi-go/server/store/storetest"
)

// mutantEnv names the deliberate bug the reference store runs with, when
// TestReference runs in a child process of TestMutantsFail.
const mutantEnv = "STORETEST_MUTANT"

// TestReference runs the suite against the reference store: a suite that a
// straightforward, correct backend cannot pass would be wrong.
func TestReference(t *testing.T) {
	mutant := os.Getenv(mutantEnv)
	storetest.Run(t, func(t *testing.T) store.Store {
		s := newMemStore(mutant)
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// TestReferenceLeaseClock runs the suite against the reference store with
// leases on a clock of its own (a store.LeaseClock), as PostgreSQL's follow
// the database's: the lease tests then wait on that clock, and tell the
// store times it must ignore for its leases.
func TestReferenceLeaseClock(t *testing.T) {
	storetest.Run(t, openLeaseClock)
}

// TestReferenceJobCounts runs the tests of store.JobCounter against the
// reference store, told the time and on a clock of its own.
func TestReferenceJobCounts(t *testing.T) {
	mutant := os.Getenv(mutantEnv)
	t.Run("Told", func(t *testing.T) {
		storetest.RunJobCounts(t, func(t *testing.T) store.Store { return newMemStore(mutant) })
	})
	t.Run("LeaseClock", func(t *testing.T) { storetest.RunJobCounts(t, openLeaseClock) })
}

// openLeaseClock opens a reference store whose leases follow the machine's
// clock, with the mutant the environment names.
func openLeaseClock(*testing.T) store.Store {
	s := newMemStore(os.Getenv(mutantEnv))
	s.clock = time.Now
	return memClockStore{s}
}

// leaseClockMutants are deliberate bugs of a store whose leases follow its
// own clock, and the subtests of TestReferenceLeaseClock (or of
// TestReferenceJobCounts) that must fail with each: a store that judges or
// sets a lease by the time it is told, as a replica with a clock five
// minutes ahead would have it judged, and the bugs of a store told the
// time that the lease tests catch on a clock too.
var leaseClockMutants = map[string][]string{
	"claimByToldTime":     {"Leases/LeasedJobIsClaimableOnlyAfterExpiry", "Leases/LeasedJobAtMaxAttemptsIsLeftAlone", "Jobs/AddPromptKeepsLeaseOfRunningJob"},
	"leaseFromToldTime":   {"Leases/ClaimLeasesJobAndCountsAttempt", "Leases/LeasedJobIsClaimableOnlyAfterExpiry", "Leases/ReleaseMakesJobClaimableAndGivesAttemptBack"},
	"extendByToldTime":    {"Leases/ExtendLeaseMovesExpiry", "Leases/ExtendLeaseAfterExpiryIsLost"},
	"extendFromToldTime":  {"Leases/ExtendLeaseMovesExpiry"},
	"extendOnlyLater":     {"Leases/ExtendLeaseMovesExpiry"},
	"claimIgnoresLease":   {"Leases/LeasedJobIsClaimableOnlyAfterExpiry", "Concurrency/ConcurrentClaimsLeaseEachJobOnce"},
	"extendIgnored":       {"Leases/ExtendLeaseMovesExpiry"},
	"extendIgnoresExpiry": {"Leases/ExtendLeaseAfterExpiryIsLost"},
	"ignoreMaxAttempts":   {"Leases/JobAtMaxAttemptsFailsAndClaimMovesOn"},
	"anyOwner":            {"Leases/LeaseCallsOfNonOwnerAreLost", "Leases/LeaseCallsAfterReclaimAreLost"},
	"docsFenceByToldTime": {"DocsUpdates/IndexWriteIsFencedByTheUpdatesLease"},
	"docsFenceLapsed":     {"DocsUpdates/IndexWriteIsFencedByTheUpdatesLease"},
}

// jobCountMutants are deliberate bugs of JobCounts, and the subtests of
// TestReferenceJobCounts that must fail with each.
var jobCountMutants = map[string][]string{
	"countsByToldTime":  {"LeaseClock/ByStatusAndReadyAtNow"},
	"expiryInclusive":   {"Told/ByStatusAndReadyAtNow"},
	"claimIgnoresLease": {"Told/ByStatusAndReadyAtNow", "LeaseClock/ByStatusAndReadyAtNow"},
}

// TestMutantsFail runs the suite against reference stores with one bug
// each and checks that the subtest meant to catch the bug fails: proof
// that those assertions can fail.
func TestMutantsFail(t *testing.T) {
	if os.Getenv(mutantEnv) != "" {
		t.Skip("inside a mutant run")
	}
	thorough.Require(t, "runs the suite once per planted bug")
	// Each mutant, and the subtests (area/name) that must fail with it.
	mutants := map[string][]string{
		"keepZone":                  {"Projects/CreateThenGetRoundTripsEveryField", "Jobs/CreateJobStoresActiveJobWithOnePrompt"},
		"milliseconds":              {"Jobs/CreateJobStoresActiveJobWithOnePrompt", "Jobs/TimesAreKeptToTheMicrosecond"},
		"projectOverwrite":          {"Projects/CreateWithTakenIDConflicts"},
		"updateMergesEmpty":         {"Projects/UpdateReplacesFieldsButKeepsCreatedAt"},
		"updateOverwritesCreatedAt": {"Projects/UpdateReplacesFieldsButKeepsCreatedAt"},
		"projectsByCreatedAt":       {"Projects/ProjectsAreListedByID"},
		"duplicateHash":             {"Keys/DuplicateIDOrHashConflicts"},
		"unsortedKeyLists":          {"Keys/ProjectsAndScopesReadBackSorted"},
		"hidesRevokedKeys":          {"Keys/KeyByHashReturnsRevokedAndExpiredKeys"},
		"hashPrefixMatch":           {"Keys/KeyByHashOfUnknownHashIsNotFound"},
		"keysByID":                  {"Keys/KeysAreListedByCreatedAtThenID"},
		"revokeMissingIsNil":        {"Keys/RevokeMissingKeyIsNotFound"},
		"revokeOverwrites":          {"Keys/RevokeKeyKeepsFirstRevocation"},
		"dropsBranch":               {"Jobs/CreateJobStoresActiveJobWithOnePrompt"},
		"jobIDsPerProject":          {"Jobs/CreateJobWithTakenIDConflicts"},
		"jobsAcrossProjects":        {"Jobs/JobOfAnotherProjectIsNotFound", "Jobs/AddPromptToMissingJobIsNotFound", "Jobs/ArchiveMissingJobIsNotFound"},
		"promptsPrepended":          {"Jobs/AddPromptAppendsInOrder"},
		"promptKeepsStatus":         {"Jobs/AddPromptReactivatesCompletedJobKeepingPRLinkAndBranch", "Jobs/AddPromptReactivatesFailedJobAndClearsReason"},
		"promptKeepsReason":         {"Jobs/AddPromptReactivatesFailedJobAndClearsReason"},
		"promptClearsPRLink":        {"Jobs/AddPromptReactivatesCompletedJobKeepingPRLinkAndBranch"},
		"promptDropsLease":          {"Jobs/AddPromptKeepsLeaseOfRunningJob"},
		"promptToArchived":          {"Jobs/AddPromptToArchivedJobIsRefused", "Idempotency/RefusedWriteRecordsNoKey"},
		"rearchive":                 {"Jobs/ArchiveJobTwiceKeepsFirstArchivedAt"},
		"archiveKeepsLease":         {"Jobs/ArchiveJobSetsArchivedAndDropsLease", "Leases/ArchiveDuringLeaseLosesLease"},
		"replayNotFlagged":          {"Idempotency/CreateReplayReturnsOriginalJobAndCreatesNone"},
		"ignoreHash":                {"Idempotency/CreateWithOtherHashIsMismatch", "Idempotency/PromptWithOtherHashIsMismatch"},
		"globalIdemKeys":            {"Idempotency/KeysArePerProject"},
		"promptReplayAppends":       {"Idempotency/PromptReplayAppendsNothing"},
		"recordKeyOnFailure":        {"Idempotency/RefusedWriteRecordsNoKey"},
		"claimsFailed":              {"Leases/NothingReadyIsErrNoJob"},
		"expiryInclusive":           {"Leases/LeasedJobIsClaimableOnlyAfterExpiry"},
		"claimIgnoresLease":         {"Leases/LeasedJobIsClaimableOnlyAfterExpiry", "Concurrency/ConcurrentClaimsLeaseEachJobOnce"},
		"claimByID":                 {"Leases/ClaimTakesOldestReadyJobFirst"},
		"ignoreMaxAttempts":         {"Leases/JobAtMaxAttemptsFailsAndClaimMovesOn"},
		"failedKeepsLease":          {"Leases/JobAtMaxAttemptsFailsAndClaimMovesOn"},
		"maxAttemptsStops":          {"Leases/JobAtMaxAttemptsFailsAndClaimMovesOn"},
		"anyOwner":                  {"Leases/LeaseCallsOfNonOwnerAreLost", "Leases/LeaseCallsAfterReclaimAreLost"},
		"extendIgnored":             {"Leases/ExtendLeaseMovesExpiry"},
		"extendIgnoresExpiry":       {"Leases/ExtendLeaseAfterExpiryIsLost"},
		"extendOnlyLater":           {"Leases/ExtendLeaseMovesExpiry"},
		"finishClearsPRLink":        {"Leases/FinishCompletedWithUnhandledPromptKeepsJobActive"},
		"finishIgnoresNewPrompts":   {"Leases/FinishCompletedWithUnhandledPromptKeepsJobActive"},
		"finishKeepsAttempts":       {"Leases/FinishCompletedWithUnhandledPromptKeepsJobActive"},
		"dropsFailureReason":        {"Leases/FinishFailedSetsReasonAndDropsLease"},
		"finishKeepsLease":          {"Leases/FinishCompletedSetsPRLinkAndDropsLease"},
		"releaseKeepsAttempt":       {"Leases/ReleaseMakesJobClaimableAndGivesAttemptBack"},
		"nonAtomicViews":            {"Views/InvalidCountsAreRejectedAtomically"},
		"negativeBot":               {"Views/InvalidCountsAreRejectedAtomically"},
		"anyHour":                   {"Views/InvalidCountsAreRejectedAtomically"},
		"viewsOverwrite":            {"Views/AddViewsSumsBatchesAndNeverOverwrites"},
		"countsBots":                {"Views/BotViewsAreNeverCounted"},
		"listsEmptyRows":            {"Views/BotViewsAreNeverCounted"},
		"toInclusive":               {"Views/RangeIsHalfOpenOnWholeHours"},
		"orderByHuman":              {"Views/RowsAreOrderedByTotalThenPath"},
		"hasMoreOffByOne":           {"Views/PagesReportHasMoreExactly"},
		"nilRows":                   {"Views/UnknownProjectGivesEmptyResult", "Views/PagesReportHasMoreExactly"},
		"leakProjects":              {"Views/OtherProjectsViewsNeverLeak"},
		"noQueryValidation":         {"Views/InvalidQueryIsAnError"},
		"racyViews":                 {"Concurrency/ConcurrentAddViewsSumExactly"},
		"pingFails":                 {"Ping/PingAnswersOnOpenStore"},
		"promptKeepsAttempts":       {"Jobs/FollowUpGivesFreshAttempts", "Jobs/AddPromptReactivatesFailedJobAndClearsReason"},
		"keyChecksSkipped":          {"Inputs/InvalidArgumentsAreRefusedAndStoreNothing"},
		"storesRefusedProject":      {"Inputs/InvalidArgumentsAreRefusedAndStoreNothing"},
		"finishAnyHandled":          {"Inputs/FinishWithHandledBeyondThePromptsIsRefused"},
		"promptCapIgnored":          {"PromptCaps/FollowUpsStopAtThePromptCap", "PromptCaps/FollowUpsStopAtTheCharacterCap", "PromptCaps/ConcurrentFollowUpsNeverPassTheCaps"},
		"promptCapInclusive":        {"PromptCaps/FollowUpsStopAtThePromptCap", "PromptCaps/FollowUpsStopAtTheCharacterCap"},
		"promptCapCountsBytes":      {"PromptCaps/FollowUpsStopAtTheCharacterCap"},
		"promptCapBeforeReplay":     {"PromptCaps/ReplayAtTheCapIsAnswered"},
		"promptCapRacy":             {"PromptCaps/ConcurrentFollowUpsNeverPassTheCaps"},
	}
	maps.Copy(mutants, siteMutants)
	maps.Copy(mutants, visitorMutants)
	maps.Copy(mutants, operatorMutants)
	maps.Copy(mutants, sessionMutants)
	maps.Copy(mutants, agentMutants)
	maps.Copy(mutants, pathMutants)
	maps.Copy(mutants, docsMutants)
	maps.Copy(mutants, docsUpdateMutants)
	maps.Copy(mutants, assistantMutants)
	maps.Copy(mutants, conversationMutants)
	runMutants(t, "TestReference", "", mutants)
	runMutants(t, "TestReferenceLeaseClock", "leaseClock/", leaseClockMutants)
	runMutants(t, "TestReferenceJobCounts", "jobCounts/", jobCountMutants)
}

// runMutants runs the test top in a child process once per mutant, with
// the reference store carrying the mutant's bug, each as a subtest named
// prefix and the mutant, and checks that the subtests (area/name, under
// top) meant to catch it fail.
func runMutants(t *testing.T, top, prefix string, mutants map[string][]string) {
	failLine := regexp.MustCompile(`--- FAIL: ` + top + `/(\S+)`)
	for _, name := range slices.Sorted(maps.Keys(mutants)) {
		t.Run(prefix+name, func(t *testing.T) {
			// Only the areas the mutant must fail in run: the whole suite
			// once per mutant takes minutes under the race detector.
			var areas []string
			for _, sub := range mutants[name] {
				area, _, _ := strings.Cut(sub, "/")
				if !slices.Contains(areas, area) {
					areas = append(areas, area)
				}
			}
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^"+top+"$/^("+strings.Join(areas, "|")+")$", "-test.v")
			cmd.Env = append(os.Environ(), mutantEnv+"="+name)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			if err == nil {
				t.Fatalf("the suite passed with mutant %s", name)
			}
			failed := map[string]bool{}
			for _, m := range failLine.FindAllStringSubmatch(out.String(), -1) {
				failed[m[1]] = true
			}
			for _, want := range mutants[name] {
				if !failed[want] {
					var got []string
					for f := range failed {
						if strings.Count(f, "/") == 1 {
							got = append(got, f)
						}
					}
					slices.Sort(got)
					t.Errorf("mutant %s: subtest %s passed; failed subtests: %v", name, want, got)
				}
			}
		})
	}
}
