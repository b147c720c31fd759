// scaleset-conformance drives the GitHub simulator (test/simulator) with
// GitHub's own Go client of the runner scale-set protocol,
// github.com/actions/scaleset (the client actions-runner-controller uses),
// unmodified, through every call a listener and a controller make:
// registration (PAT and GitHub App), runner groups, scale-set CRUD, a second
// scope's tenant, the message session, long poll, acquire, JIT runners, job
// messages and their times, X-ScaleSetMaxCapacity, runner removal (busy and
// after the job), token expiry and refresh, session conflict and deletion,
// scale-set deletion, and the client's own listener loop end to end.
//
//	scaleset-conformance -simulator PATH/github-simulator
//
// It starts the simulator as a process of its own on a free port, prints one
// line per step and "N passed, M failed" last; the exit status is 1 if any
// step failed.
package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/actions/scaleset"
)

const (
	org      = "octo"
	repo     = "octo/app"
	pat      = "ghp_simulator"
	setName  = "conformance"
	setLabel = "conformance"
	// An assigned job no runner takes goes back to the scale set after this
	// (--assignment-timeout-ms); the reassignment step skips it on the
	// simulator's clock.
	assignmentTimeoutMs = 60_000
)

// conformance holds what the steps share: the simulator, the clients and
// what earlier steps created.
type conformance struct {
	sim       *simulator
	client    *scaleset.Client // PAT, organization scope
	scaleSet  *scaleset.RunnerScaleSet
	gpuGroup  int
	session   *scaleset.MessageSessionClient
	lastMsgID int
	runner    *scaleset.RunnerReference // the JIT runner of the job path
	jobID     int64                     // the job of the job path
	times     scaleset.JobMessageBase   // its times, as the messages carried them
	pending   []int64                   // jobs queued by the capacity step, for the listener
}

func main() {
	simulatorPath := flag.String("simulator", "", "path of the github-simulator executable")
	flag.Parse()
	if *simulatorPath == "" {
		fmt.Fprintln(os.Stderr, "usage: scaleset-conformance -simulator PATH")
		os.Exit(2)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rsa key:", err)
		os.Exit(1)
	}
	keyDir, err := os.MkdirTemp("", "scaleset-conformance-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer os.RemoveAll(keyDir)
	publicKey := keyDir + "/app.pub.pem"
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err := os.WriteFile(publicKey, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Admin tokens live 61 s: the client renews a token 60 s before its exp,
	// so any call a second after a registration registers again, and the
	// expiry steps need not wait out an hour.
	sim, err := startSimulator(*simulatorPath, "--org", org, "--repo", repo, "--long-poll-ms", "1500",
		"--admin-token-ttl-s", "61", "--app", "4243:Iv1.conformance:"+publicKey, "--app-installation", "4243:4242:"+org,
		"--assignment-timeout-ms", fmt.Sprint(assignmentTimeoutMs))
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the simulator:", err)
		os.Exit(1)
	}
	defer sim.stop()
	fmt.Println("simulator at", sim.base)

	c := &conformance{sim: sim}
	privateKey := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	steps := []struct {
		name string
		run  func(context.Context) error
	}{
		{"registration with a PAT (admin token)", c.registerWithPAT},
		{"registration with a GitHub App", func(ctx context.Context) error { return c.registerWithApp(ctx, privateKey) }},
		{"errors carry X-GitHub-Request-Id", c.restRequestID},
		{"runner groups", c.runnerGroups},
		{"scale-set create/get/update", c.scaleSetCRUD},
		{"each scope has its own tenant", c.tenantPerScope},
		{"message session", c.openSession},
		{"session conflict (409) with ActivityId", c.sessionConflict},
		{"long poll: 202 when idle", c.longPollIdle},
		{"long poll released by a job (JobAvailable)", c.longPollJob},
		{"acquire jobs (JobAssigned)", c.acquire},
		{"JIT runner configuration", c.jitConfig},
		{"job starts on the JIT runner (JobStarted)", c.jobStarts},
		{"busy runner removal: JobStillRunning", c.removeBusy},
		{"job completes (JobCompleted), times in order", c.jobCompletes},
		{"runner removal after the job", c.removeAfterJob},
		{"idle runner removal", c.removeIdle},
		{"X-ScaleSetMaxCapacity bounds the jobs handed out", c.maxCapacity},
		{"message-queue token expiry: session refresh", c.queueTokenExpiry},
		{"admin token expiry: proactive re-registration", c.adminTokenRefresh},
		{"revoked admin token: 401, then renewed", c.adminTokenRevoked},
		{"the client's listener runs jobs end to end", c.listenerEndToEnd},
		{"an assignment no runner takes is requeued", c.reassignment},
		{"session delete", c.deleteSession},
		{"scale-set deletion", c.deleteScaleSet},
	}
	passed, failed := 0, 0
	for _, s := range steps {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		start := time.Now()
		err := runStep(ctx, s.run)
		cancel()
		if err != nil {
			failed++
			fmt.Printf("FAIL %s (%.1fs): %v\n", s.name, time.Since(start).Seconds(), err)
			continue
		}
		passed++
		fmt.Printf("ok   %s (%.1fs)\n", s.name, time.Since(start).Seconds())
	}
	fmt.Printf("%d passed, %d failed\n", passed, failed)
	if failed > 0 {
		sim.stop()
		os.Exit(1)
	}
}

// runStep runs one step; a panic (say, on what a failed step left nil) fails it alone.
func runStep(ctx context.Context, run func(context.Context) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return run(ctx)
}

func (c *conformance) newPATClient(scopeURL, token string) (*scaleset.Client, error) {
	return scaleset.NewClientWithPersonalAccessToken(scaleset.NewClientWithPersonalAccessTokenConfig{
		GitHubConfigURL:     scopeURL,
		PersonalAccessToken: token,
		SystemInfo:          scaleset.SystemInfo{System: "octorun-conformance", Subsystem: "test"},
	}, scaleset.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))), scaleset.WithRetryMax(1))
}

func (c *conformance) registerWithPAT(ctx context.Context) error {
	client, err := c.newPATClient(c.sim.base+"/"+org, pat)
	if err != nil {
		return err
	}
	c.client = client
	group, err := client.GetRunnerGroupByName(ctx, "Default")
	if err != nil {
		return err
	}
	if group.ID != 1 || !group.IsDefault {
		return fmt.Errorf("Default group: %+v", group)
	}
	calls, err := c.sim.calls()
	if err != nil {
		return err
	}
	if calls["rest.registration_token"] != 1 || calls["rest.runner_registration"] != 1 {
		return fmt.Errorf("expected one registration token and one runner-registration, calls %v", calls)
	}
	return nil
}

func (c *conformance) registerWithApp(ctx context.Context, privateKey string) error {
	client, err := scaleset.NewClientWithGitHubApp(scaleset.ClientWithGitHubAppConfig{
		GitHubConfigURL: c.sim.base + "/" + org,
		GitHubAppAuth:   scaleset.GitHubAppAuth{ClientID: "Iv1.conformance", InstallationID: 4242, PrivateKey: privateKey},
		SystemInfo:      scaleset.SystemInfo{System: "octorun-conformance"},
	}, scaleset.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))), scaleset.WithRetryMax(1))
	if err != nil {
		return err
	}
	group, err := client.GetRunnerGroupByName(ctx, scaleset.DefaultRunnerGroup) // "default": names match in any case
	if err != nil {
		return err
	}
	if group.ID != 1 {
		return fmt.Errorf("default group: %+v", group)
	}
	calls, err := c.sim.calls()
	if err != nil {
		return err
	}
	if calls["rest.app_token"] != 1 {
		return fmt.Errorf("expected one installation token, calls %v", calls)
	}
	return nil
}

// A refused registration (bad PAT) is a REST error; the client quotes GitHub's request id.
func (c *conformance) restRequestID(ctx context.Context) error {
	client, err := c.newPATClient(c.sim.base+"/"+org, "ghp_wrong")
	if err != nil {
		return err
	}
	_, err = client.GetRunnerGroupByName(ctx, "Default")
	if err == nil {
		return errors.New("a bad PAT was accepted")
	}
	if !strings.Contains(err.Error(), "github_request_id=") || !strings.Contains(err.Error(), "401") {
		return fmt.Errorf("error without a 401 and github_request_id: %v", err)
	}
	return nil
}

func (c *conformance) runnerGroups(ctx context.Context) error {
	var created struct {
		ID int `json:"id"`
	}
	if err := c.sim.control("POST", "/_sim/runner-groups", `{"org":"`+org+`","name":"gpu"}`, &created); err != nil {
		return err
	}
	var listed struct {
		TotalCount   int `json:"total_count"`
		RunnerGroups []struct {
			ID      int    `json:"id"`
			Name    string `json:"name"`
			Default bool   `json:"default"`
		} `json:"runner_groups"`
	}
	header, err := c.sim.rest("GET", "/api/v3/orgs/"+org+"/actions/runner-groups", &listed)
	if err != nil {
		return err
	}
	if header.Get("X-GitHub-Request-Id") == "" {
		return errors.New("REST answer without X-GitHub-Request-Id")
	}
	if listed.TotalCount != 2 || listed.RunnerGroups[0].Name != "Default" || listed.RunnerGroups[1].ID != created.ID {
		return fmt.Errorf("REST runner groups: %+v", listed)
	}
	group, err := c.client.GetRunnerGroupByName(ctx, "gpu")
	if err != nil {
		return err
	}
	if group.ID != created.ID || group.IsDefault || group.Name != "gpu" {
		return fmt.Errorf("gpu group: %+v, created %d", group, created.ID)
	}
	c.gpuGroup = group.ID
	if _, err := c.client.GetRunnerGroupByName(ctx, "nope"); err == nil {
		return errors.New("an unknown runner group was found")
	}
	return nil
}

func (c *conformance) scaleSetCRUD(ctx context.Context) error {
	created, err := c.client.CreateRunnerScaleSet(ctx, &scaleset.RunnerScaleSet{
		Name:          setName,
		RunnerGroupID: 1,
		Labels:        []scaleset.Label{{Name: setLabel}},
		RunnerSetting: scaleset.RunnerSetting{DisableUpdate: true},
	})
	if err != nil {
		return err
	}
	if created.ID == 0 || created.RunnerGroupName != "Default" || created.CreatedOn.IsZero() ||
		created.RunnerJitConfigURL == "" || created.Statistics == nil || !created.RunnerSetting.DisableUpdate ||
		len(created.Labels) != 1 || created.Labels[0].Type != "System" {
		return fmt.Errorf("created: %+v", created)
	}
	if time.Since(created.CreatedOn) > time.Minute {
		return fmt.Errorf("createdOn %v is not the time of creation", created.CreatedOn)
	}
	c.scaleSet = created
	byName, err := c.client.GetRunnerScaleSet(ctx, 1, setName)
	if err != nil || byName == nil || byName.ID != created.ID {
		return fmt.Errorf("by name: %+v, %v", byName, err)
	}
	byID, err := c.client.GetRunnerScaleSetByID(ctx, created.ID)
	if err != nil || byID.Name != setName {
		return fmt.Errorf("by id: %+v, %v", byID, err)
	}
	moved, err := c.client.UpdateRunnerScaleSet(ctx, created.ID, &scaleset.RunnerScaleSet{RunnerGroupID: c.gpuGroup})
	if err != nil {
		return err
	}
	if moved.RunnerGroupID != c.gpuGroup || moved.RunnerGroupName != "gpu" || moved.Name != setName {
		return fmt.Errorf("moved to gpu: %+v", moved)
	}
	back, err := c.client.UpdateRunnerScaleSet(ctx, created.ID, &scaleset.RunnerScaleSet{RunnerGroupID: 1,
		Labels: []scaleset.Label{{Name: setLabel}, {Name: "linux"}}})
	if err != nil {
		return err
	}
	if back.RunnerGroupName != "Default" || len(back.Labels) != 2 {
		return fmt.Errorf("moved back: %+v", back)
	}
	if _, err := c.client.CreateRunnerScaleSet(ctx, &scaleset.RunnerScaleSet{Name: setName, RunnerGroupID: 1}); err == nil ||
		!strings.Contains(err.Error(), "409") {
		return fmt.Errorf("a second scale set of the same name: %v", err)
	}
	if _, err := c.client.CreateRunnerScaleSet(ctx, &scaleset.RunnerScaleSet{Name: "elsewhere", RunnerGroupID: 999}); err == nil {
		return errors.New("a scale set in a runner group that does not exist was created")
	}
	return nil
}

// The repository's tenant does not see the organization's scale sets.
func (c *conformance) tenantPerScope(ctx context.Context) error {
	repoClient, err := c.newPATClient(c.sim.base+"/"+repo, pat)
	if err != nil {
		return err
	}
	seen, err := repoClient.GetRunnerScaleSet(ctx, 1, setName)
	if err != nil {
		return err
	}
	if seen != nil {
		return fmt.Errorf("the repository's tenant sees the organization's scale set %d", seen.ID)
	}
	own, err := repoClient.CreateRunnerScaleSet(ctx, &scaleset.RunnerScaleSet{Name: setName, RunnerGroupID: 1})
	if err != nil {
		return err
	}
	if own.ID == c.scaleSet.ID {
		return errors.New("both tenants share a scale set")
	}
	if _, err := repoClient.GetRunnerScaleSetByID(ctx, c.scaleSet.ID); err == nil {
		return errors.New("the repository's tenant reads the organization's scale set by id")
	}
	if _, err := repoClient.GetRunnerGroupByName(ctx, "gpu"); err == nil {
		return errors.New("a repository sees the organization's runner group")
	}
	return repoClient.DeleteRunnerScaleSet(ctx, own.ID)
}
