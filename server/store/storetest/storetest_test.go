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

// TestMutantsFail runs the suite against reference stores with one bug
// each and checks that the subtest meant to catch the bug fails: proof
// that those assertions can fail.
func TestMutantsFail(t *testing.T) {
	if os.Getenv(mutantEnv) != "" {
		t.Skip("inside a mutant run")
	}
	if testing.Short() {
		t.Skip("runs the suite once per mutant")
	}
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
	failLine := regexp.MustCompile(`--- FAIL: TestReference/(\S+)`)
	for _, name := range slices.Sorted(maps.Keys(mutants)) {
		t.Run(name, func(t *testing.T) {
			// Only the areas the mutant must fail in run: the whole suite
			// once per mutant takes minutes under the race detector.
			var areas []string
			for _, sub := range mutants[name] {
				area, _, _ := strings.Cut(sub, "/")
				if !slices.Contains(areas, area) {
					areas = append(areas, area)
				}
			}
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestReference$/^("+strings.Join(areas, "|")+")$", "-test.v")
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
